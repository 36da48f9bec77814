// Command goclient drives a running fakeazure (TLS) with the Azure SDK for Go at the versions the
// Karpenter-on-Azure v1.14.0 controller is built with (azcore v1.22.0, azidentity v1.14.0,
// armcompute/v7 v7.3.0, armnetwork/v6 v6.2.0, armresourcegraph v0.10.0): the fake az credential,
// every read the controller makes, NIC/VM/billing-extension create with the SDK's default
// polling, the garbage-collection Resource Graph query, and the VM delete.  It exits 1 on the
// first call the Go SDK cannot make or parse.  Run it through python -m fakeazure.tools.go_sdk_check.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/network/armnetwork/v6"
	arg "github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resourcegraph/armresourcegraph"
)

func must(err error, what string) {
	if err != nil {
		fmt.Println("FAIL", what, err)
		os.Exit(1)
	}
	fmt.Println("ok  ", what)
}

func main() {
	endpoint := os.Args[1]
	sub := "00000000-0000-0000-0000-000000000000"
	rg := "MC_rg-karp_karp_southcentralus"
	ctx := context.Background()
	cred, err := azidentity.NewAzureCLICredential(nil)
	must(err, "AzureCLICredential")
	tok, err := cred.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{"https://management.azure.com/.default"}})
	must(err, "GetToken via fake az: "+tok.Token)
	opts := &arm.ClientOptions{ClientOptions: policy.ClientOptions{Cloud: cloud.Configuration{
		ActiveDirectoryAuthorityHost: endpoint + "/aad/",
		Services:                     map[cloud.ServiceName]cloud.ServiceConfiguration{cloud.ResourceManager: {Endpoint: endpoint, Audience: "https://management.azure.com/"}}}}}
	vnets, _ := armnetwork.NewVirtualNetworksClient(sub, cred, opts)
	v, err := vnets.Get(ctx, rg, "aks-vnet-12345678", nil)
	must(err, "VNet GET resourceGuid="+str(v.Properties.ResourceGUID))
	subnets, _ := armnetwork.NewSubnetsClient(sub, cred, opts)
	s, err := subnets.Get(ctx, rg, "aks-vnet-12345678", "aks-subnet", nil)
	must(err, "subnet GET "+str(s.Properties.AddressPrefix))
	nsgs, _ := armnetwork.NewSecurityGroupsClient(sub, cred, opts)
	pn := nsgs.NewListPager(rg, nil)
	for pn.More() {
		page, err := pn.NextPage(ctx)
		must(err, "NSG list")
		for _, n := range page.Value {
			fmt.Println("     nsg", *n.Name)
		}
	}
	lbs, _ := armnetwork.NewLoadBalancersClient(sub, cred, opts)
	pl := lbs.NewListPager(rg, nil)
	for pl.More() {
		page, err := pl.NextPage(ctx)
		must(err, fmt.Sprintf("LB list (%d)", len(page.Value)))
	}
	cig, _ := armcompute.NewCommunityGalleryImageVersionsClient(sub, cred, opts)
	pc := cig.NewListPager("southcentralus", "AKSUbuntu-38d80f77-467a-481f-a8d4-09b6d4220bd2", "2204gen2containerd", nil)
	for pc.More() {
		page, err := pc.NextPage(ctx)
		must(err, "community gallery versions")
		for _, iv := range page.Value {
			fmt.Println("     version", *iv.Name, iv.Properties.PublishedDate.Format(time.RFC3339))
		}
	}
	nics, _ := armnetwork.NewInterfacesClient(sub, cred, opts)
	subnetID := fmt.Sprintf("/subscriptions/%s/resourceGroups/%s/providers/Microsoft.Network/virtualNetworks/aks-vnet-12345678/subnets/aks-subnet", sub, rg)
	t0 := time.Now()
	np, err := nics.BeginCreateOrUpdate(ctx, rg, "aks-default-a", armnetwork.Interface{Location: to.Ptr("southcentralus"),
		Tags: map[string]*string{"karpenter.sh_nodepool": to.Ptr("default")},
		Properties: &armnetwork.InterfacePropertiesFormat{IPConfigurations: []*armnetwork.InterfaceIPConfiguration{{Name: to.Ptr("ipconfig"),
			Properties: &armnetwork.InterfaceIPConfigurationPropertiesFormat{Subnet: &armnetwork.Subnet{ID: to.Ptr(subnetID)}, Primary: to.Ptr(true)}}}}}, nil)
	must(err, "NIC PUT")
	nic, err := np.PollUntilDone(ctx, nil)
	must(err, "NIC poll "+str(nic.Properties.IPConfigurations[0].Properties.PrivateIPAddress))
	vms, _ := armcompute.NewVirtualMachinesClient(sub, cred, opts)
	vp, err := vms.BeginCreateOrUpdate(ctx, rg, "aks-default-a", armcompute.VirtualMachine{Location: to.Ptr("southcentralus"), Zones: []*string{to.Ptr("1")},
		Tags: map[string]*string{"karpenter.sh_nodepool": to.Ptr("default")},
		Properties: &armcompute.VirtualMachineProperties{HardwareProfile: &armcompute.HardwareProfile{VMSize: to.Ptr(armcompute.VirtualMachineSizeTypes("Standard_D2s_v3"))},
			NetworkProfile: &armcompute.NetworkProfile{NetworkInterfaces: []*armcompute.NetworkInterfaceReference{{ID: nic.ID, Properties: &armcompute.NetworkInterfaceReferenceProperties{DeleteOption: to.Ptr(armcompute.DeleteOptionsDelete)}}}}}}, nil)
	must(err, "VM PUT")
	vm, err := vp.PollUntilDone(ctx, nil)
	must(err, "VM poll "+str(vm.Properties.ProvisioningState))
	exts, _ := armcompute.NewVirtualMachineExtensionsClient(sub, cred, opts)
	ep, err := exts.BeginCreateOrUpdate(ctx, rg, "aks-default-a", "computeAksLinuxBilling", armcompute.VirtualMachineExtension{Location: to.Ptr("southcentralus"),
		Properties: &armcompute.VirtualMachineExtensionProperties{Publisher: to.Ptr("Microsoft.AKS"), Type: to.Ptr("Compute.AKS.Linux.Billing"), TypeHandlerVersion: to.Ptr("1.0")}}, nil)
	must(err, "billing extension PUT")
	ext, err := ep.PollUntilDone(ctx, nil)
	must(err, "billing extension poll "+str(ext.Properties.ProvisioningState))
	g, _ := arg.NewClient(cred, opts)
	q := `Resources | where type == "microsoft.compute/virtualmachines" | where resourceGroup == "mc_rg-karp_karp_southcentralus" | where tags has_cs "karpenter.sh_nodepool" | where not(tags has_cs "karpenter.azure.com_aksmachine_nodeclaim")`
	res, err := g.Resources(ctx, arg.QueryRequest{Query: &q, Subscriptions: []*string{&sub}, Options: &arg.QueryRequestOptions{ResultFormat: to.Ptr(arg.ResultFormatObjectArray)}}, nil)
	must(err, fmt.Sprintf("Resource Graph: %d rows, truncated=%v, data[0].name=%v", *res.Count, *res.ResultTruncated, res.Data.([]interface{})[0].(map[string]interface{})["name"]))
	dp, err := vms.BeginDelete(ctx, rg, "aks-default-a", &armcompute.VirtualMachinesClientBeginDeleteOptions{ForceDeletion: to.Ptr(true)})
	must(err, "VM DELETE")
	_, err = dp.PollUntilDone(ctx, nil)
	must(err, "VM delete poll")
	_, err = nics.Get(ctx, rg, "aks-default-a", nil)
	fmt.Println("     NIC after VM delete:", err != nil)
	fmt.Printf("     NIC+VM+ext create, query, delete with the Go SDK's default polling: %.1f s\n", time.Since(t0).Seconds())
}

func str(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}
