// Added to sigs.k8s.io/karpenter pkg/controllers/disruption (core v1.1.0 on) by karpenter-harness's `fast`
// controller timing (harness/data/controller-timing.yaml) beside pass_trigger.go: the parts of it that
// core's releases spell differently. From core v1.1 controller-runtime's workqueue is typed (v0.19) and
// the scheduling duration is an operatorpkg metric; pass_queue_v1_0.go is core v1.0's.

package disruption

import (
	"context"

	opmetrics "github.com/awslabs/operatorpkg/metrics"
	"github.com/prometheus/client_golang/prometheus"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
)

// harnessPassHandler enqueues the singleton's own request (operatorpkg singleton.Source): the workqueue
// runs it once.
func harnessPassHandler() handler.Funcs {
	return handler.Funcs{
		GenericFunc: func(_ context.Context, _ event.GenericEvent, queue workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			queue.Add(reconcile.Request{})
		},
	}
}

// harnessSchedulingDuration is karpenter_scheduler_scheduling_duration_seconds, on the harness's probe.
func harnessSchedulingDuration() prometheus.Collector {
	return scheduling.DurationSeconds.(*opmetrics.PrometheusHistogram).HistogramVec
}
