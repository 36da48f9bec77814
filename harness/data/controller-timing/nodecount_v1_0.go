// Added to sigs.k8s.io/karpenter pkg/controllers/state (core before v1.1.0) by karpenter-harness's `fast`
// controller timing (harness/data/controller-timing.yaml) beside nominations.go: nodecount.go as core
// v1.0 spells it, a plain Prometheus gauge.

package state

import "github.com/prometheus/client_golang/prometheus"

func harnessNodeCount() prometheus.Collector { return ClusterStateNodesCount }
