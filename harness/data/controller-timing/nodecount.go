// Added to sigs.k8s.io/karpenter pkg/controllers/state (core v1.1.0 on) by karpenter-harness's `fast`
// controller timing (harness/data/controller-timing.yaml) beside nominations.go: the state's node count
// (karpenter_cluster_state_node_count), an operatorpkg metric from core v1.1; nodecount_v1_0.go is
// core v1.0's.

package state

import (
	opmetrics "github.com/awslabs/operatorpkg/metrics"
	"github.com/prometheus/client_golang/prometheus"
)

func harnessNodeCount() prometheus.Collector {
	return ClusterStateNodesCount.(*opmetrics.PrometheusGauge).GaugeVec
}
