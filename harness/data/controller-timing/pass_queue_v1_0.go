// Added to sigs.k8s.io/karpenter pkg/controllers/disruption (core before v1.1.0) by karpenter-harness's
// `fast` controller timing (harness/data/controller-timing.yaml) beside pass_trigger.go: pass_queue.go as
// core v1.0 spells it. Its controller-runtime (v0.18) hands an event handler an untyped workqueue, and
// the scheduling duration is a plain Prometheus metric (scheduling.SchedulingDurationSeconds).

package disruption

import (
	"context"

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
		GenericFunc: func(_ context.Context, _ event.GenericEvent, queue workqueue.RateLimitingInterface) {
			queue.Add(reconcile.Request{})
		},
	}
}

// harnessSchedulingDuration is karpenter_scheduler_scheduling_duration_seconds, on the harness's probe.
func harnessSchedulingDuration() prometheus.Collector { return scheduling.SchedulingDurationSeconds }
