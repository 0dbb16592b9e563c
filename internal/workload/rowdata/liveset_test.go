package rowdata

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
)

// TestTakeWithARowPerWorker: as many rows as workers, each worker taking
// a row and putting it back, over and over: at every moment a row is
// free for the worker that asks, so no Take may come back empty, though
// the rows move between shards the scan has passed and those it has not.
func TestTakeWithARowPerWorker(t *testing.T) {
	const workers, rounds = 4, 200000
	s := NewLiveSet(0)
	for i := 0; i < workers; i++ {
		s.Add(s.NextID(), 400)
	}
	var misses atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for i := 0; i < rounds; i++ {
				id, size, ok := s.Take(rng)
				if !ok {
					misses.Add(1)
					continue
				}
				s.Add(id, size)
			}
		}()
	}
	wg.Wait()
	if n := misses.Load(); n != 0 {
		t.Fatalf("%d of %d Takes found no row with a row per worker", n, workers*rounds)
	}
	if n := s.Len(); n != workers {
		t.Fatalf("%d rows left, want %d", n, workers)
	}
}
