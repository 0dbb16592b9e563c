package shard

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/target/engines"
	"github.com/ceiling-db/ceiling/internal/testenv"
)

// TestEnsureTableRace: shards that find no meeting table create it at
// the same moment; each ends with the table there and no error.
func TestEnsureTableRace(t *testing.T) {
	testenv.EachEngine(t, "sqlite:"+filepath.Join(t.TempDir(), "m.db"), func(t *testing.T, dsn string) {
		ctx := context.Background()
		open := func() target.Target {
			tg, err := engines.Open(ctx, target.Options{DSN: dsn, MaxConns: 2})
			if err != nil {
				t.Fatal(err)
			}
			return tg
		}
		a, b := open(), open()
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
