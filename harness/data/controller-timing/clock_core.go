// Added to sigs.k8s.io/karpenter pkg/operator by karpenter-harness's `fast` timing
// (harness/data/controller-timing.yaml, kind `clock`): the operator's clock, which core passes to
// every controller, is the wall clock plus the offset the harness advances (k8s.io/apimachinery's
// metav1.HarnessClockOffset, added by the same timing); its timers are the real clock's. The offset is
// on the harness's probe (probe.go), so the harness knows when the controller has read an advance.

package operator

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"sigs.k8s.io/karpenter/pkg/metrics"
)

type harnessClock struct{ clock.RealClock }

func (harnessClock) Now() time.Time { return metav1.HarnessClockNow() }

func (c harnessClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

func init() {
	metrics.HarnessProbe.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "karpenter_harness_clock_offset_seconds",
		Help: "How far the harness has advanced the controller's clock (karpenter-harness fast timing).",
	}, func() float64 { return metav1.HarnessClockOffset().Seconds() }))
}
