// Added to github.com/patrickmn/go-cache by karpenter-harness's `fast` timing
// (harness/data/controller-timing.yaml, kind `clock`): the cache's expirations are read on the clock the
// harness advances, the wall clock plus the offset in the file KARPENTER_HARNESS_CLOCK_FILE names
// (seconds), the file the controller's clock reads (k8s.io/apimachinery's metav1.HarnessClockNow). The
// provider keeps what Azure refused in such caches (karpenter-provider-azure pkg/cache
// unavailableofferings.go) and core its events' deduplication (sigs.k8s.io/karpenter pkg/events
// recorder.go), so an offering is offered again, and an event recorded again, when the harness's clock
// says the TTL is over. go-cache has no module requirements, so it reads the file itself. Without the
// variable the offset is 0. Nothing but the harness writes the file.

package cache

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

var (
	harnessClockOffset atomic.Int64
	harnessMovedMu     sync.Mutex
	harnessMoved       = make(chan struct{})
)

func harnessNow() time.Time { return time.Now().Add(time.Duration(harnessClockOffset.Load())) }

// harnessClockMoved is closed when the harness next moves the clock: a janitor then deletes what expired
// at once rather than at its next tick (10 s for the provider's unavailable offerings, whose eviction is
// what tells the provider to list its instance types again: UnavailableOfferings.SeqNum).
func harnessClockMoved() <-chan struct{} {
	harnessMovedMu.Lock()
	defer harnessMovedMu.Unlock()
	return harnessMoved
}

func harnessReadClock(path string) {
	text, err := os.ReadFile(path)
	if err != nil {
		return
	}
	seconds, err := strconv.ParseFloat(strings.TrimSpace(string(text)), 64)
	if err != nil {
		return
	}
	if harnessClockOffset.Swap(int64(seconds*float64(time.Second))) != int64(seconds*float64(time.Second)) {
		harnessMovedMu.Lock()
		close(harnessMoved)
		harnessMoved = make(chan struct{})
		harnessMovedMu.Unlock()
	}
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
