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
	"strings"
	"unicode"

	"github.com/Azure/azure-sdk-for-go/services/compute/mgmt/2022-08-01/compute" //nolint:staticcheck
	"github.com/Azure/karpenter-provider-azure/pkg/apis/v1beta1"
	"github.com/Azure/karpenter-provider-azure/pkg/auth"
	kcache "github.com/Azure/karpenter-provider-azure/pkg/cache"
	"github.com/Azure/karpenter-provider-azure/pkg/operator/options"
	"github.com/Azure/karpenter-provider-azure/pkg/providers/instancetype"
	"github.com/Azure/karpenter-provider-azure/pkg/providers/pricing"
	"github.com/Azure/karpenter-provider-azure/pkg/providers/quota"
	"github.com/patrickmn/go-cache"
	"gopkg.in/inf.v0"
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
	Capacity     map[string]string      `json:"capacity"`
	KubeReserved map[string]string      `json:"kubeReserved"`
	Eviction     map[string]string      `json:"evictionThreshold"`
}

type output struct {
	Error         string                        `json:"error,omitempty"`
	Prices        map[string]map[string]float64 `json:"prices"`
	InstanceTypes []instanceType                `json:"instanceTypes"`
}

// skuList is a skewer.ResourceClient serving a fixed SKU list in one page. It stands for ARM's
// `$filter=location eq '<region>'` (skewer.WithLocation) the way the harness's fake applies it: a SKU
// whose `locations` is non-empty and does not list the region (whitespace and case ignored) is left out.
type skuList struct{ skus []compute.ResourceSku }

func normalizeLocation(s string) string {
	return strings.ToLower(strings.Join(strings.FieldsFunc(s, unicode.IsSpace), ""))
}

func inRegion(sku compute.ResourceSku, region string) bool {
	if sku.Locations == nil || len(*sku.Locations) == 0 {
		return true
	}
	for _, l := range *sku.Locations {
		if normalizeLocation(l) == normalizeLocation(region) {
			return true
		}
	}
	return false
}

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

// quantities gives each quantity exactly, as a decimal string: CPU in millicores, the rest in units
// (Quantity.MilliValue/Value would wrap around for absurd SKU values).
func quantities(list corev1.ResourceList) map[string]string {
	out := map[string]string{}
	for name, q := range list {
		d := new(inf.Dec).Set(q.AsDec())
		if name == corev1.ResourceCPU {
			d.Mul(d, inf.NewDec(1000, 0))
		}
		out[string(name)] = d.Round(d, 0, inf.RoundCeil).String()
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
	listed := []compute.ResourceSku{}
	for _, sku := range in.SKUs {
		if inRegion(sku, in.Region) {
			listed = append(listed, sku)
		}
	}
	provider := instancetype.NewDefaultProvider(in.Region, cache.New(instancetype.InstanceTypesCacheTTL, 0),
		&skuList{listed}, prices, kcache.NewUnavailableOfferings(), quota.NewProvider(nil, in.Region))
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
