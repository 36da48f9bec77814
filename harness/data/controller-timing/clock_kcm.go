// Added to k8s.io/kubernetes pkg/controller by karpenter-harness's `fast` timing
// (harness/data/controller-timing.yaml kube-controller-manager-source): the clock of the Job, CronJob and
// TTL-after-finished controllers is the wall clock plus the offset the harness advances, read from the file
// KARPENTER_HARNESS_CLOCK_FILE names (seconds), the file the API server's and Karpenter's clocks read, so a
// CronJob's schedule, a Job's activeDeadlineSeconds and a finished Job's TTL pass with an `advance` step.
// Only those controllers take it: node lifecycle reads the Leases' renewTime, which the kubelets stamp on
// the wall clock. Without the variable the offset is 0. Nothing but the harness writes the file.

package controller

import (
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"
)

var harnessClockOffset atomic.Int64

// HarnessNow is the wall clock plus the harness's offset (the CronJob controller's `now`).
func HarnessNow() time.Time { return time.Now().Add(time.Duration(harnessClockOffset.Load())) }

// harnessClock is the real clock whose Now and Since are on the harness's offset; its timers and tickers
// are real, so a workqueue's AddAfter computed from Now waits a real duration.
type harnessClock struct{ clock.RealClock }

func (harnessClock) Now() time.Time                  { return HarnessNow() }
func (harnessClock) Since(ts time.Time) time.Duration { return HarnessNow().Sub(ts) }

// HarnessClock is the Job and TTL-after-finished controllers' clock.
func HarnessClock() clock.WithTicker { return harnessClock{} }

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
