// Command difftest computes instance types for a list of ARM ResourceSku objects through the Azure
// Karpenter provider's own exported API, for the harness's differential test
// (tests/model/test_difftest.py compares its output with harness/model/instancetypes.py).
//
// It drives instancetype.DefaultProvider exactly as the controller does: UpdateInstanceTypes (skewer
// lists the SKUs from a resource client; restricted, unparsable, unsupported and location-restricted
// SKUs are dropped) and then List for one AKSNodeClass (offerings, requirements, capacity, the
// per-NodeClass filters). Built against github.com/Azure/karpenter-provider-azure at the version in
// the generated go.mod (harness/model/difftest.py writes it outside the repository).
//
// Input (stdin): {"region": ..., "nodeResourceGroup": ..., "networkPlugin": ..., "networkPluginMode": ...,
// "vmMemoryOverheadPercent": ..., "imageFamily": ..., "osDiskSizeGB": ..., "skus": [ResourceSku JSON]}.
// Output (stdout): {"error": "...", "prices": {name: {"on-demand": p, "spot": p}}, "instanceTypes": [...]}
// with one entry per instance type List returned.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/Azure/azure-sdk-for-go/services/compute/mgmt/2022-08-01/compute" //nolint:staticcheck
	"github.com/Azure/karpenter-provider-azure/pkg/apis/v1beta1"
	"github.com/Azure/karpenter-provider-azure/pkg/auth"
	kcache "github.com/Azure/karpenter-provider-azure/pkg/cache"
	"github.com/Azure/karpenter-provider-azure/pkg/operator/options"
	"github.com/Azure/karpenter-provider-azure/pkg/providers/instancetype"
	"github.com/Azure/karpenter-provider-azure/pkg/providers/pricing"
	"github.com/Azure/karpenter-provider-azure/pkg/providers/quota"
	"github.com/patrickmn/go-cache"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/scheduling"
)

type input struct {
	Region                  string                `json:"region"`
	NodeResourceGroup       string                `json:"nodeResourceGroup"`
	NetworkPlugin           string                `json:"networkPlugin"`
	NetworkPluginMode       string                `json:"networkPluginMode"`
	VMMemoryOverheadPercent float64               `json:"vmMemoryOverheadPercent"`
	ImageFamily             string                `json:"imageFamily"`
	OSDiskSizeGB            int32                 `json:"osDiskSizeGB"`
	SKUs                    []compute.ResourceSku `json:"skus"`
}

type requirement struct {
	Operator string   `json:"operator"`
	Values   []string `json:"values"`
}

type offering struct {
	Requirements map[string]requirement `json:"requirements"`
	Price        float64                `json:"price"`
	Available    bool                   `json:"available"`
}

type instanceType struct {
	Name         string                 `json:"name"`
	Requirements map[string]requirement `json:"requirements"`
	Offerings    []offering             `json:"offerings"`
	Capacity     map[string]int64       `json:"capacity"`
	KubeReserved map[string]int64       `json:"kubeReserved"`
	Eviction     map[string]int64       `json:"evictionThreshold"`
}

type output struct {
	Error         string                        `json:"error,omitempty"`
	Prices        map[string]map[string]float64 `json:"prices"`
	InstanceTypes []instanceType                `json:"instanceTypes"`
}

// skuList is a skewer.ResourceClient serving a fixed SKU list in one page, after the location
// filter ARM applies to `$filter=location eq '<region>'` (skewer.WithLocation).
type skuList struct{ skus []compute.ResourceSku }

func (s *skuList) ListComplete(_ context.Context, _, _ string) (compute.ResourceSkusResultIterator, error) {
	page := compute.NewResourceSkusResultPage(
		compute.ResourceSkusResult{Value: &s.skus},
		func(context.Context, compute.ResourceSkusResult) (compute.ResourceSkusResult, error) {
			return compute.ResourceSkusResult{}, nil
		})
	return compute.NewResourceSkusResultIterator(page), nil
}

func requirements(reqs scheduling.Requirements) map[string]requirement {
	out := map[string]requirement{}
	for key, r := range reqs {
		values := r.Values()
		sort.Strings(values)
		out[key] = requirement{Operator: string(r.Operator()), Values: values}
	}
	return out
}

func quantities(list corev1.ResourceList) map[string]int64 {
	out := map[string]int64{}
	for name, q := range list {
		if name == corev1.ResourceCPU {
			out[string(name)] = q.MilliValue()
		} else {
			out[string(name)] = q.Value()
		}
	}
	return out
}

func run(in input) output {
	out := output{Prices: map[string]map[string]float64{}, InstanceTypes: []instanceType{}}
	ctx := options.ToContext(context.Background(), &options.Options{
		NodeResourceGroup:       in.NodeResourceGroup,
		NetworkPlugin:           in.NetworkPlugin,
		NetworkPluginMode:       in.NetworkPluginMode,
		VMMemoryOverheadPercent: in.VMMemoryOverheadPercent,
	})
	// A non-public cloud: the pricing provider keeps its static tables and starts no update loop.
	env, err := auth.EnvironmentFromName("AzureUSGovernmentCloud")
	if err != nil {
		out.Error = err.Error()
		return out
	}
	prices := pricing.NewProvider(ctx, env, nil, in.Region, make(chan struct{}))
	provider := instancetype.NewDefaultProvider(in.Region, cache.New(instancetype.InstanceTypesCacheTTL, 0),
		&skuList{in.SKUs}, prices, kcache.NewUnavailableOfferings(), quota.NewProvider(nil, in.Region))
	for _, sku := range in.SKUs {
		if sku.Name == nil {
			continue
		}
		od, _ := prices.OnDemandPrice(*sku.Name)
		spot, _ := prices.SpotPrice(*sku.Name)
		out.Prices[*sku.Name] = map[string]float64{"on-demand": od, "spot": spot}
	}
	if err := provider.UpdateInstanceTypes(ctx); err != nil {
		out.Error = err.Error()
		return out
	}
	imageFamily := in.ImageFamily
	osDisk := in.OSDiskSizeGB
	nodeClass := &v1beta1.AKSNodeClass{Spec: v1beta1.AKSNodeClassSpec{ImageFamily: &imageFamily, OSDiskSizeGB: &osDisk}}
	its, err := provider.List(ctx, nodeClass)
	if err != nil {
		out.Error = err.Error()
		return out
	}
	for _, it := range its {
		out.InstanceTypes = append(out.InstanceTypes, convert(it))
	}
	sort.Slice(out.InstanceTypes, func(i, j int) bool { return out.InstanceTypes[i].Name < out.InstanceTypes[j].Name })
	return out
}

func convert(it *cloudprovider.InstanceType) instanceType {
	o := instanceType{
		Name:         it.Name,
		Requirements: requirements(it.Requirements),
		Capacity:     quantities(it.Capacity),
		KubeReserved: quantities(it.Overhead.KubeReserved),
		Eviction:     quantities(it.Overhead.EvictionThreshold),
	}
	for _, of := range it.Offerings {
		o.Offerings = append(o.Offerings, offering{Requirements: requirements(of.Requirements), Price: of.Price, Available: of.Available})
	}
	return o
}

func main() {
	data, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var in input
	if err := json.Unmarshal(data, &in); err != nil {
		fmt.Fprintln(os.Stderr, "decoding input:", err)
		os.Exit(2)
	}
	enc := json.NewEncoder(os.Stdout)
	if err := enc.Encode(run(in)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}
