package shard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/target/engines"
	"github.com/ceiling-db/ceiling/internal/testenv"
)

// TestEnsureTableRace: shards that find no meeting table create it at
// the same moment; each ends with the table there and no error.
func TestEnsureTableRace(t *testing.T) {
	testenv.EachEngine(t, "sqlite:"+filepath.Join(t.TempDir(), "m.db"), func(t *testing.T, dsn string) {
		ctx := context.Background()
		a, b := openTarget(t, dsn), openTarget(t, dsn)
		defer a.Close(ctx)
		defer b.Close(ctx)
		defer a.Schema().DropAll(ctx)
		for round := range 10 {
			if err := a.Schema().DropTable(ctx, Table); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i, tg := range []target.Target{a, b} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[i] = ensureTable(ctx, tg)
				}()
			}
			wg.Wait()
			if errs[0] != nil || errs[1] != nil {
				t.Fatalf("round %d: %v / %v", round, errs[0], errs[1])
			}
		}
	})
}

// TestShardLock: shards hold ceiling's namespace lock together, and a
// ceiling that wants it alone does not get it while they do (MySQL: each
// shard holds a slot lock of its own), nor they while it does; once the
// shards are gone it does.
func TestShardLock(t *testing.T) {
	testenv.EachEngine(t, "sqlite:"+filepath.Join(t.TempDir(), "l.db"), func(t *testing.T, dsn string) {
		ctx := context.Background()
		a, b, c := openTarget(t, dsn), openTarget(t, dsn), openTarget(t, dsn)
		defer c.Close(ctx)
		for _, s := range []target.Target{a, b} {
			if err := s.(target.ShardLocker).LockNamespaceShared(ctx); err != nil {
				t.Fatalf("a shard: %v", err)
			}
		}
		if err := c.(target.Exclusive).LockNamespace(ctx); !errors.Is(err, target.ErrNamespaceBusy) {
			t.Fatalf("a ceiling alone while two shards run: %v, want it busy", err)
		}
		a.Close(ctx)
		if err := c.(target.Exclusive).LockNamespace(ctx); !errors.Is(err, target.ErrNamespaceBusy) {
			t.Fatalf("a ceiling alone while one shard still runs: %v, want it busy", err)
		}
		b.Close(ctx)
		if err := c.(target.Exclusive).LockNamespace(ctx); err != nil {
			t.Fatalf("alone once the shards are gone: %v", err)
		}
		d := openTarget(t, dsn)
		defer d.Close(ctx)
		if err := d.(target.ShardLocker).LockNamespaceShared(ctx); !errors.Is(err, target.ErrNamespaceBusy) {
			t.Fatalf("a shard while a ceiling holds the database alone: %v, want it busy", err)
		}
	})
}

// openTarget opens dsn for a test of two connections at most.
func openTarget(t *testing.T, dsn string) target.Target {
	t.Helper()
	tg, err := engines.Open(context.Background(), target.Options{DSN: dsn, MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// TestExchangeRace: two shards post a round's figures at once to a probe
// table that neither finds, so that each creates it and may replace the
// other's; each ends with both shards' figures, every round.
func TestExchangeRace(t *testing.T) {
	testenv.EachEngine(t, "sqlite:"+filepath.Join(t.TempDir(), "x.db"), func(t *testing.T, dsn string) {
		ctx := context.Background()
		ms := make([]*Meeting, 2)
		for i := range ms {
			tg := openTarget(t, dsn)
			defer tg.Close(ctx)
			conn, err := tg.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ms[i] = &Meeting{t: tg, conn: conn, key: "race", spec: Spec{I: i, N: 2}, token: newToken()}
			defer ms[i].Leave(ctx)
		}
		defer ms[0].t.Schema().DropAll(ctx)
		for round := 1; round <= 8; round++ {
			if err := ms[0].t.Schema().DropTable(ctx, ProbeTable); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			got := make([][][]byte, 2)
			errs := make([]error, 2)
			for i, m := range ms {
				wg.Add(1)
				go func() {
					defer wg.Done()
					got[i], errs[i] = m.Exchange(ctx, "race", round, []byte(fmt.Sprintf("shard %d round %d", i, round)), 20*time.Second, io.Discard)
				}()
			}
			wg.Wait()
			for i := range ms {
				if errs[i] != nil {
					t.Fatalf("round %d, shard %d: %v", round, i, errs[i])
				}
				for j, b := range got[i] {
					if want := fmt.Sprintf("shard %d round %d", j, round); string(b) != want {
						t.Fatalf("round %d: shard %d read %q from shard %d, want %q", round, i, b, j, want)
					}
				}
			}
		}
	})
}

// TestLateShard: once the shards have met and started, a process that
// joins as one of them (a replacement for a shard that stopped) is
// refused at once instead of starting on its own, mid-run.
func TestLateShard(t *testing.T) {
	testenv.EachEngine(t, "sqlite:"+filepath.Join(t.TempDir(), "late.db"), func(t *testing.T, dsn string) {
		ctx := context.Background()
		tgs := []target.Target{openTarget(t, dsn), openTarget(t, dsn), openTarget(t, dsn)}
		for _, tg := range tgs {
			defer tg.Close(ctx)
		}
		defer tgs[0].Schema().DropAll(ctx)
		var wg sync.WaitGroup
		ms := make([]*Meeting, 2)
		errs := make([]error, 2)
		for i := range ms {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ms[i], errs[i] = Meet(ctx, tgs[i], "late-run", Spec{I: i, N: 2}, 30*time.Second, io.Discard)
			}()
		}
		wg.Wait()
		if errs[0] != nil || errs[1] != nil {
			t.Fatalf("the two shards: %v / %v", errs[0], errs[1])
		}
		defer ms[0].Leave(ctx)
		ms[1].Leave(ctx) // shard 1 stops mid-run
		start := time.Now()
		m, err := Meet(ctx, tgs[2], "late-run", Spec{I: 1, N: 2}, 20*time.Second, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "shard 0 started without this one") || time.Since(start) > 10*time.Second {
			m.Leave(ctx)
			t.Fatalf("a replacement for shard 1: %v after %v, want refused at once", err, time.Since(start))
		}
	})
}
