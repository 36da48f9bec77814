// Added to k8s.io/apimachinery pkg/apis/meta/v1 by karpenter-harness's `fast` timing
// (harness/data/controller-timing.yaml, kind `clock`): the clock the harness advances. metav1.Now is
// the wall clock plus an offset read from the file KARPENTER_HARNESS_CLOCK_FILE names (seconds, a
// decimal number), so every timestamp a process built with it writes (a condition's lastTransitionTime,
// the API server's creationTimestamp and deletionTimestamp) is on the same clock as the controller's
// own (core's operator clock reads HarnessClockOffset too). Without the variable the offset is 0.
// Nothing but the harness writes the file.

package v1

import (
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

var harnessClockOffset atomic.Int64

// HarnessClockOffset is how far the harness has advanced this process's clock.
func HarnessClockOffset() time.Duration { return time.Duration(harnessClockOffset.Load()) }

// HarnessClockNow is the wall clock plus the harness's offset.
func HarnessClockNow() time.Time { return time.Now().Add(HarnessClockOffset()) }

func harnessReadClock(path string) {
	text, err := os.ReadFile(path)
	if err != nil {
		return
	}
	seconds, err := strconv.ParseFloat(strings.TrimSpace(string(text)), 64)
	if err != nil {
		return
	}
	harnessClockOffset.Store(int64(seconds * float64(time.Second)))
}

func init() {
	path := os.Getenv("KARPENTER_HARNESS_CLOCK_FILE")
	if path == "" {
		return
	}
	harnessReadClock(path)
	go func() {
		for range time.Tick(10 * time.Millisecond) {
			harnessReadClock(path)
		}
	}()
}
