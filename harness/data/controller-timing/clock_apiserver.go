// Added to k8s.io/apiserver pkg/registry/rest by karpenter-harness's `fast` timing
// (harness/data/controller-timing.yaml kube-apiserver-source): the API server's creationTimestamp and
// deletionTimestamp (FillObjectMetaSystemFields, BeforeDelete) are the wall clock plus the offset the
// harness advances (and the generic registry's, for an object its finalizers hold: HarnessNow), read from
// the file KARPENTER_HARNESS_CLOCK_FILE names (seconds), the same file the
// controller's clock reads, so core compares them with a clock they share. Without the variable the
// offset is 0. Nothing but the harness writes the file.

package rest

import (
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var harnessClockOffset atomic.Int64

func harnessNow() metav1.Time {
	return metav1.NewTime(time.Now().Add(time.Duration(harnessClockOffset.Load())))
}

// HarnessNow is harnessNow for the generic registry's deletion of an object its finalizers hold.
func HarnessNow() metav1.Time { return harnessNow() }

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
