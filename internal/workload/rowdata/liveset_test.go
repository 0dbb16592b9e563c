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

// TestShardLiveSet: a shard's NextID hands out only its class of ids,
// after the loaded ones, so that the shards' ids never meet.
func TestShardLiveSet(t *testing.T) {
	const loaded, n = 10, 3
	seen := map[int64]bool{}
	for i := 0; i < n; i++ {
		s := NewShardLiveSet(loaded, i, n)
		if s.MaxID() != loaded {
			t.Fatalf("shard %d: MaxID %d before any insert, want %d", i, s.MaxID(), loaded)
		}
		prev := int64(loaded)
		for k := 0; k < 5; k++ {
			id := s.NextID()
			if id <= prev || id%n != int64(i) || seen[id] {
				t.Fatalf("shard %d/%d: id %d after %d (ids must rise, be ≡ %d mod %d, and be no other shard's)", i, n, id, prev, i, n)
			}
			seen[id], prev = true, id
		}
		if s.MaxID() != prev {
			t.Fatalf("shard %d: MaxID %d, want %d", i, s.MaxID(), prev)
		}
	}
	for id := int64(loaded + 1); id <= loaded+15; id++ {
		if !seen[id] {
			t.Fatalf("id %d handed out by no shard: the classes must cover every id", id)
		}
	}
}

// TestRemoveUpTo: RemoveUpTo takes out exactly the ids up to its bound,
// once, and the set goes on handing out the others.
func TestRemoveUpTo(t *testing.T) {
	s := NewLiveSet(0)
	for i := 0; i < 1000; i++ {
		s.Add(s.NextID(), 400)
	}
	if n := s.RemoveUpTo(10); n != 10 {
		t.Fatalf("RemoveUpTo(10) removed %d of ids 1..1000", n)
	}
	if n := s.RemoveUpTo(10); n != 0 {
		t.Errorf("RemoveUpTo(10) again removed %d", n)
	}
	if n := s.Len(); n != 990 {
		t.Fatalf("Len %d after removing 10 of 1000", n)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 990; i++ {
		id, _, ok := s.Take(rng)
		if !ok || id <= 10 {
			t.Fatalf("Take %d: id %d, ok %v; want one of 11..1000", i, id, ok)
		}
	}
}
