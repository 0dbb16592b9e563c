package report

import (
	"testing"

	"github.com/ceiling-db/ceiling/internal/runner"
	"github.com/ceiling-db/ceiling/internal/target"
)

// TestCPUAndWaits checks the per-interval CPU and wait series the HTML
// report charts: CPU as % of the host's cores, waits in ms per second, and
// nil (not 0) when the counters are absent.
func TestCPUAndWaits(t *testing.T) {
	e := &runner.Evidence{Seconds: 2, Counters: map[string]float64{
		target.CtrHostCPUTotal: 4, target.CtrHostCPUBusy: 3, target.CtrServerCPUSec: 1,
		target.CtrWaitLogMs: 1000, target.CtrWaitCPUMs: 500,
	}}
	server, host, waits := cpuAndWaits(e)
	if server == nil || *server != 25 || host == nil || *host != 75 {
		t.Errorf("server %v, host %v; want 25 and 75 (%% of the host's cores)", server, host)
	}
	if len(waits) != 2 || waits["log_io"] != 500 || waits["cpu"] != 250 {
		t.Errorf("waits %v, want log_io 500 and cpu 250 ms/s", waits)
	}
	server, host, waits = cpuAndWaits(&runner.Evidence{Seconds: 1, Counters: map[string]float64{target.CtrLogBytes: 10}})
	if server != nil || host != nil || waits != nil {
		t.Errorf("no CPU or wait counters: got %v %v %v, want nils", server, host, waits)
	}
	if s, h, w := cpuAndWaits(nil); s != nil || h != nil || w != nil {
		t.Error("nil evidence should give nils")
	}
}
