// Added to sigs.k8s.io/karpenter pkg/controllers/state by karpenter-harness's `fast` controller timing
// (harness/data/controller-timing.yaml): when each node's nomination ends, as Karpenter's own state
// holds it. A nominated node is no disruption candidate until then (statenode.go Nominated), and the
// harness must wait for a pass after that moment; without this it dates nominations from the
// provisioning rounds it counts between polls, which a round landing just after a poll can mislead.
// Nothing but the harness reads it.

package state

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	karpentermetrics "sigs.k8s.io/karpenter/pkg/metrics"
)

var harnessNominatedUntil = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "karpenter_harness_nominated_until_seconds",
	Help: "When the node's latest nomination ends, Unix seconds (karpenter-harness fast timing).",
}, []string{"provider_id"})

// harnessNominated records a nomination (Cluster.NominateNodeForPod, under the cluster's lock).
func harnessNominated(providerID string, until time.Time) {
	harnessNominatedUntil.WithLabelValues(providerID).Set(float64(until.UnixNano()) / 1e9)
}

func init() {
	crmetrics.Registry.MustRegister(harnessNominatedUntil)
	// ... and on the harness's probe (probe.go), with the node count a kept controller is awaited on
	// (nodecount.go: as core's release spells the metric)
	karpentermetrics.HarnessProbe.MustRegister(harnessNominatedUntil, harnessNodeCount())
}
