package runner

import (
	"testing"

	"github.com/ceiling-db/ceiling/internal/workload"
)

// pausingWorkload declares that its workers pause.
type pausingWorkload struct{ fakeWorkload }

func (*pausingWorkload) WorkersPause() bool { return true }

// TestMultiplexes: the hint targets dial by follows the runner's rule.
func TestMultiplexes(t *testing.T) {
	t.Setenv("CEILING_MUX_GROUPS", "")
	w := &fakeWorkload{}
	cases := []struct {
		name string
		cfg  Config
		w    workload.Workload
		want bool
	}{
		{"closed loop, 8 workers", Config{Threads: 8}, w, muxSupported},
		{"closed loop, 64 workers", Config{Threads: 64}, w, muxSupported},
		{"one worker", Config{Threads: 1}, w, false},
		{"open loop", Config{Threads: 8, Rate: 100}, w, false},
		{"workers that pause", Config{Threads: 8}, &pausingWorkload{}, false},
	}
	for _, c := range cases {
		if got := Multiplexes(c.cfg, c.w); got != c.want {
			t.Errorf("%s: Multiplexes = %v, want %v", c.name, got, c.want)
		}
	}
	t.Setenv("CEILING_MUX_GROUPS", "0")
	if Multiplexes(Config{Threads: 8}, w) {
		t.Error("CEILING_MUX_GROUPS=0: Multiplexes = true, want false")
	}
}
