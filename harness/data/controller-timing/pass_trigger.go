// Added to sigs.k8s.io/karpenter pkg/controllers/disruption by karpenter-harness's `fast` controller
// timing (harness/data/controller-timing.yaml): SIGUSR1 asks the disruption singleton for a pass now.
// The harness sends it only once the cluster it watches has been quiet; the singleton's own 10 s poll
// is untouched, so every pass upstream would run still runs, and the extra one is a pass upstream's
// poll could have landed on.
//
// It also numbers the passes (karpenter_harness_disruption_passes_started_total) and says which pass
// last ran every method without acting (karpenter_harness_disruption_pass_decided_nothing): a pass
// numbered above the count the harness read once the cluster had changed started after that change,
// so its "nothing to do" is about the cluster as it is now. What differs between core's releases (the
// workqueue's type, the scheduling metric's) is in pass_queue.go and pass_queue_v1_0.go.

package disruption

import (
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/prometheus/client_golang/prometheus"

	"sigs.k8s.io/controller-runtime/pkg/event"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/source"

	karpentermetrics "sigs.k8s.io/karpenter/pkg/metrics"
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
	return source.Channel(events, harnessPassHandler())
}

var harnessPassesStarted, harnessPassDecidedNothing atomic.Int64

// harnessPassStart numbers a pass as it starts (Controller.Reconcile, before it reads the cluster).
func harnessPassStart() int64 { return harnessPassesStarted.Add(1) }

// harnessPassEnd records pass `pass` as one whose methods all decided nothing.
func harnessPassEnd(pass int64) { harnessPassDecidedNothing.Store(pass) }

func init() {
	harness := []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "karpenter_harness_disruption_passes_started_total",
			Help: "Disruption passes started (karpenter-harness fast timing).",
		}, func() float64 { return float64(harnessPassesStarted.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "karpenter_harness_disruption_pass_decided_nothing",
			Help: "The number of the latest disruption pass whose methods all decided nothing (karpenter-harness fast timing).",
		}, func() float64 { return float64(harnessPassDecidedNothing.Load()) }),
	}
	crmetrics.Registry.MustRegister(harness...)
	// the harness's probe (probe.go) also serves the provisioning rounds its settle counts
	// (karpenter_scheduler_scheduling_duration_seconds, scheduling/metrics.go)
	karpentermetrics.HarnessProbe.MustRegister(append(harness, harnessSchedulingDuration())...)
}
