package osstat

import (
	"os"
	"testing"
)

// BenchmarkRunQueueSelf reads this process's threads' run-queue time, as
// the runner does with every sample.
func BenchmarkRunQueueSelf(b *testing.B) {
	var q RunQueue
	pids := []int{os.Getpid()}
	for b.Loop() {
		if _, ok := q.Read(pids); !ok {
			b.Skip("no schedstat here")
		}
	}
}
