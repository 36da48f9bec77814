// Added to sigs.k8s.io/karpenter pkg/metrics by karpenter-harness's `fast` controller timing
// (harness/data/controller-timing.yaml): the few series the harness's settle reads, on a port of their
// own. The controller's /metrics is ~580 KB (a series per instance type and offering), and the harness
// reads its numbers ten times a second; this registry holds only the collectors registered in it
// (the harness's own and the core ones its settle counts). Nothing but the harness reads it.

package metrics

import (
	"net/http"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// HarnessProbe is served on KARPENTER_HARNESS_PROBE_ADDR (host:port) when that is set.
var HarnessProbe = prometheus.NewRegistry()

func init() {
	addr := os.Getenv("KARPENTER_HARNESS_PROBE_ADDR")
	if addr == "" {
		return
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(HarnessProbe, promhttp.HandlerOpts{}))
	go func() { _ = http.ListenAndServe(addr, mux) }()
}
