// Added to sigs.k8s.io/karpenter pkg/controllers/disruption by karpenter-harness's `fast` controller
// timing (harness/data/controller-timing.yaml): the wait before a consolidation command is validated
// again, the timing's tenth of upstream's 15 s unless KARPENTER_HARNESS_COMMAND_VALIDATION_DELAY names
// another (the real engine names upstream's own for a dump at scale: controller-timing.yaml `at-scale`).

package disruption

import (
	"os"
	"time"
)

func harnessValidationDelay(fast time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv("KARPENTER_HARNESS_COMMAND_VALIDATION_DELAY")); err == nil && d > 0 {
		return d
	}
	return fast
}
