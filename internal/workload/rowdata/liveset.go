package rowdata

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
)

const liveShards = 64

// LiveSet is the in-memory set of live row ids shared by all workers of a
// run, with each row's data size so deletes account exact bytes. It is
// sharded by id so concurrent workers rarely meet on a lock; picking a random
// shard and then a random element is uniform while the shards stay balanced,
// which they do because ids are sequential.
//
// LiveSet is safe for concurrent use. Only NextID writes memory that
// every worker shares; Add, Take and Peek lock one shard (the set keeps no
// global count, which would be a cache line written by every request of
// every worker).
type LiveSet struct {
	shards [liveShards]liveShard
	next   atomic.Int64 // last id handed out by NextID
	stride int64        // NextID's step: 1, or a shard's count of shards
	loaded int64        // the last id of the prepared rows
}

type liveShard struct {
	mu    sync.Mutex
	ids   []int64
	sizes []uint16
	_     [40]byte // keep shards on separate cache lines
}

// NewLiveSet returns an empty set whose NextID starts after lastID.
func NewLiveSet(lastID int64) *LiveSet {
	s := &LiveSet{stride: 1, loaded: lastID}
	s.next.Store(lastID)
	return s
}

// NewShardLiveSet is an empty set for shard i of n (run --shard): its
// NextID hands out only the ids ≡ i (mod n) after lastID, so that the
// shards' inserts never meet.
func NewShardLiveSet(lastID int64, i, n int) *LiveSet {
	s := &LiveSet{stride: int64(n), loaded: lastID}
	first := lastID + 1
	first += ((int64(i)-first)%int64(n) + int64(n)) % int64(n)
	s.next.Store(first - int64(n))
	return s
}

// NextID hands out the next row id: sequential, or a shard's next one.
func (s *LiveSet) NextID() int64 { return s.next.Add(s.stride) }

// MaxID is the highest id handed out so far (by NewLiveSet or NextID): no
// row of the set has a larger id.
func (s *LiveSet) MaxID() int64 { return max(s.next.Load(), s.loaded) }

// Len is the number of live ids. It locks each shard in turn: for
// occasional use (the mixed workload sizing its deletes), not per request.
func (s *LiveSet) Len() int64 {
	var n int64
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		n += int64(len(sh.ids))
		sh.mu.Unlock()
	}
	return n
}

// Add records a live row.
func (s *LiveSet) Add(id int64, size int64) {
	sh := &s.shards[uint64(id)%liveShards]
	sh.mu.Lock()
	sh.ids = append(sh.ids, id)
	sh.sizes = append(sh.sizes, uint16(size))
	sh.mu.Unlock()
}

// RemoveUpTo takes the ids from 1 to max out of the set and returns how
// many there were. It goes through every shard once: for occasional use
// (setting rows apart after a load), not per request.
func (s *LiveSet) RemoveUpTo(max int64) int64 {
	var n int64
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		keep := 0
		for j, id := range sh.ids {
			if id >= 1 && id <= max {
				n++
				continue
			}
			sh.ids[keep], sh.sizes[keep] = id, sh.sizes[j]
			keep++
		}
		sh.ids, sh.sizes = sh.ids[:keep], sh.sizes[:keep]
		sh.mu.Unlock()
	}
	return n
}

// Take removes and returns a random live row, or ok=false when the set is empty.
func (s *LiveSet) Take(rng *rand.Rand) (id int64, size int64, ok bool) {
	return s.pick(rng, true)
}

// Peek returns a random live row without removing it.
func (s *LiveSet) Peek(rng *rand.Rand) (id int64, size int64, ok bool) {
	return s.pick(rng, false)
}

// pickScans is how many times pick goes round the shards before it calls
// the set empty. One round is not proof: while it goes, rows move between
// the shards it has passed and those it has not (a worker that puts its
// row back and takes another), and a thread descheduled halfway through
// can find every row it reaches taken while one it passed is free. With
// as many rows as workers (updates, -c 4 --rows 4) that happened twice in
// about 150,000 updates during test runs on the busy 2-core VM. A set
// that really is empty costs pickScans rounds.
const pickScans = 3

func (s *LiveSet) pick(rng *rand.Rand, remove bool) (int64, int64, bool) {
	start := rng.IntN(liveShards)
	for i := 0; i < pickScans*liveShards; i++ {
		sh := &s.shards[(start+i)%liveShards]
		sh.mu.Lock()
		n := len(sh.ids)
		if n == 0 {
			sh.mu.Unlock()
			continue
		}
		j := rng.IntN(n)
		id, size := sh.ids[j], int64(sh.sizes[j])
		if remove {
			sh.ids[j], sh.sizes[j] = sh.ids[n-1], sh.sizes[n-1]
			sh.ids, sh.sizes = sh.ids[:n-1], sh.sizes[:n-1]
		}
		sh.mu.Unlock()
		return id, size, true
	}
	return 0, 0, false
}
