// Added to sigs.k8s.io/karpenter pkg/controllers/disruption by karpenter-harness's `fast` controller
// timing (harness/data/controller-timing.yaml): SIGUSR1 asks the disruption singleton for a pass now.
// The harness sends it only once the cluster it watches has been quiet; the singleton's own 10 s poll
// is untouched, so every pass upstream would run still runs, and the extra one is a pass upstream's
// poll could have landed on.

package disruption

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

func harnessPassTrigger() source.Source {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGUSR1)
	events := make(chan event.GenericEvent, 1)
	go func() {
		for range signals {
			select {
			case events <- event.GenericEvent{}:
			default: // one already waiting
			}
		}
	}()
	// the singleton's own request (operatorpkg singleton.Source): the workqueue runs it once
	return source.Channel(events, handler.Funcs{
		GenericFunc: func(_ context.Context, _ event.GenericEvent, queue workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			queue.Add(reconcile.Request{})
		},
	})
}
