package rowdata

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/target/sqlite"
)

// TestReuseLiveSet: a reuse of prepared tables gives the same live ids and
// sizes as the load that made them (SQLite, 2 tables of unequal rows).
func TestReuseLiveSet(t *testing.T) {
	ctx := context.Background()
	tg, err := sqlite.Open(ctx, target.Options{DSN: "sqlite:" + filepath.Join(t.TempDir(), "r.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close(ctx)
	loaded := &Base{Rows: 501, NTables: 2, MinRows: 1, ReadOnly: true}
	if err := loaded.Prepare(ctx, tg, nil); err != nil {
		t.Fatal(err)
	}
	reused := &Base{Rows: 501, NTables: 2, MinRows: 1, ReadOnly: true, Reuse: true}
	if err := reused.Prepare(ctx, tg, nil); err != nil {
		t.Fatal(err)
	}
	for i := range loaded.Live {
		a, b := contents(loaded.Live[i]), contents(reused.Live[i])
		if len(a) != int(loaded.TableRows(i)) || !slices.Equal(a, b) {
			t.Fatalf("table %d: %d live rows loaded, %d reused, or their ids and sizes differ", i, len(a), len(b))
		}
		if loaded.Live[i].MaxID() != reused.Live[i].MaxID() {
			t.Fatalf("table %d: next id after %d loaded, %d reused", i, loaded.Live[i].MaxID(), reused.Live[i].MaxID())
		}
	}
}

// contents lists a live set's (id, size) pairs in id order.
func contents(s *LiveSet) [][2]int64 {
	var out [][2]int64
	for i := range s.shards {
		sh := &s.shards[i]
		for j, id := range sh.ids {
			out = append(out, [2]int64{id, int64(sh.sizes[j])})
		}
	}
	slices.SortFunc(out, func(a, b [2]int64) int { return int(a[0] - b[0]) })
	return out
}
