package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ceiling-db/ceiling/internal/metrics"
	"github.com/ceiling-db/ceiling/internal/report"
	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/testenv"
)

// TestShardedRun: two shards of inserts-deletes run at once on one
// prepared table (as two processes would), meet and start together, never
// insert or delete each other's rows (every delete finds its row, no
// duplicate key), and ceiling merge adds them up: requests, rows and
// threads are the shards' sums, the merged histograms hold every request,
// the table holds the prepared rows plus the inserts less the deletes
// (give or take the requests in flight at the end),
// and the merged result has a verdict where the shards' have none, and a
// latency per interval from the shards' interval histograms.
func TestShardedRun(t *testing.T) {
	testenv.EachEngine(t, "sqlite:"+filepath.Join(t.TempDir(), "s.db"), func(t *testing.T, dsn string) {
		ctx := context.Background()
		defer func() {
			code, stdout, stderr := runCLI(t, ctx, "cleanup", "inserts-deletes", "--db", dsn)
			dropped := strings.Contains(stdout, "(the shards' meeting table)")
			switch {
			case code != 0:
				t.Errorf("cleanup: exit %d\n%s%s", code, stdout, stderr)
			case strings.Contains(stdout, "kept ceiling's other tables"):
				// Another workload's tables were there before the test
				// (left by an earlier run): the meeting table stays
				// with them.
				if dropped {
					t.Errorf("cleanup dropped the meeting table while other tables of ceiling's stay\n%s", stdout)
				}
			case !dropped:
				t.Errorf("cleanup: the meeting table must go with the last table\n%s%s", stdout, stderr)
			}
		}()
		if code, stdout, stderr := runCLI(t, ctx, "prepare", "inserts-deletes", "--rows", "2000", "--db", dsn); code != 0 {
			t.Fatalf("prepare: exit %d\n%s%s", code, stdout, stderr)
		}
		out := t.TempDir()
		runShards(t, ctx, "inserts-deletes", "--rows", "2000", "--db", dsn, "-c", "3", "-T", "2s", "--out", out)
		var shards []*report.Result
		entries, _ := os.ReadDir(out)
		for _, e := range entries {
			shards = append(shards, readDoc(t, filepath.Join(out, e.Name())))
		}
		if len(shards) != 2 {
			t.Fatalf("%d results in %s, want the 2 shards'", len(shards), out)
		}
		threads := 0
		var requests int64
		for _, s := range shards {
			if s.Load.Shard == nil || s.Verdict != nil || s.Summary.Errors != 0 {
				t.Fatalf("a shard's result: shard %+v, verdict %v (want none), %d errors %v", s.Load.Shard, s.Verdict, s.Summary.Errors, s.Summary.FirstErrors)
			}
			for _, n := range s.Notes {
				if strings.Contains(n, "other work on the server") {
					t.Fatalf("a shard's result blames other work for the other shards' commits: %s", n)
				}
			}
			threads += s.Load.Threads
			requests += s.Summary.Requests
		}
		if threads != 3 || shards[0].Load.Shard.Key != shards[1].Load.Shard.Key {
			t.Fatalf("shards' threads %d (want -c 3 split), keys %q %q", threads, shards[0].Load.Shard.Key, shards[1].Load.Shard.Key)
		}

		merged := filepath.Join(t.TempDir(), "merged.json")
		code, stdout, stderr := runCLI(t, ctx, "merge", out, "--out", merged)
		if code != 0 || !strings.Contains(stdout, "verdict:") || !strings.Contains(stdout, "3 threads over 2 shards (merged)") {
			t.Fatalf("merge: exit %d (want a verdict, and the threads of both shards)\n%s%s", code, stdout, stderr)
		}
		m := readDoc(t, merged)
		ins, del := m.Summary.ByOp["insert"], m.Summary.ByOp["delete"]
		if m.Summary.Requests != requests || ins.Requests+del.Requests != requests || m.Load.Threads != 3 || m.Load.Shard.I != -1 || m.Load.Shard.N != 2 {
			t.Fatalf("merged: %d requests (insert %d, delete %d), threads %d, shard %+v; the shards made %d", m.Summary.Requests, ins.Requests, del.Requests, m.Load.Threads, m.Load.Shard, requests)
		}
		if del.Requests == 0 || del.Rows != del.Requests || ins.Rows != ins.Requests || m.Summary.Errors != 0 {
			t.Fatalf("every insert and delete must find its row alone: insert %d rows in %d, delete %d rows in %d, %d errors", ins.Rows, ins.Requests, del.Rows, del.Requests, m.Summary.Errors)
		}
		var counted int64
		for op, enc := range m.Histograms {
			h, err := metrics.DecodeHist(enc)
			if err != nil {
				t.Fatalf("histogram %s: %v", op, err)
			}
			counted += h.TotalCount()
		}
		if counted != requests || m.Verdict == nil || m.Summary.LatencyMs == nil {
			t.Fatalf("merged histograms hold %d requests (want %d); verdict %v, latency %v", counted, requests, m.Verdict, m.Summary.LatencyMs)
		}
		html := filepath.Join(t.TempDir(), "m.html")
		if code, stdout, stderr := runCLI(t, ctx, "report", merged, "-o", html); code != 0 {
			t.Fatalf("report: exit %d\n%s%s", code, stdout, stderr)
		}
		page, _ := os.ReadFile(html)
		if !strings.Contains(string(page), "2 shards merged") || !strings.Contains(string(page), "Latency percentiles") {
			t.Fatalf("the merged report must name the shards and draw the latency series made from the shards' interval histograms")
		}
		// Each point's latency is its shards' histograms merged: its max
		// is the larger of theirs.
		byShard := map[int]*report.Result{shards[0].Load.Shard.I: shards[0], shards[1].Load.Shard.I: shards[1]}
		withLatency := 0
		for i, p := range m.Intervals {
			if p.Histogram != "" {
				t.Fatalf("merged point %d keeps a histogram: only a shard's do", i)
			}
			if p.LatencyMs == nil || i >= len(byShard[0].Intervals) || i >= len(byShard[1].Intervals) {
				continue
			}
			a, b := byShard[0].Intervals[i], byShard[1].Intervals[i]
			if a.Histogram == "" || b.Histogram == "" {
				t.Fatalf("point %d: a shard's point without its histogram", i)
			}
			// A shard may have completed nothing in a point (its
			// latency null): the other's max is the merged one.
			want := 0.0
			for _, l := range []*metrics.Latency{a.LatencyMs, b.LatencyMs} {
				if l != nil {
					want = max(want, l.Max)
				}
			}
			if p.LatencyMs.Max != want {
				t.Fatalf("point %d: merged max %v ms, the shards' %v and %v", i, p.LatencyMs.Max, a.LatencyMs, b.LatencyMs)
			}
			withLatency++
		}
		if withLatency == 0 {
			t.Fatalf("no merged point has a latency (%d points)", len(m.Intervals))
		}
		// Requests in flight as the measured phase ended finished
		// uncounted: each may have moved the count by one.
		fly := int64(m.Summary.InFlightAtEnd.Requests)
		if got, want := countRows(t, dsn), 2000+ins.Rows-del.Rows; got < want-fly || got > want+fly {
			t.Fatalf("the table holds %d rows, want 2000 + %d inserted - %d deleted = %d (± %d in flight at the end)", got, ins.Rows, del.Rows, want, fly)
		}
	})
}

// runShards runs `ceiling run ARGS --shard I/2` for both shards at once,
// as two processes would, and fails the test unless both succeed,
// having met; it returns each shard's console output.
func runShards(t *testing.T, ctx context.Context, args ...string) [2]string {
	t.Helper()
	var (
		wg    sync.WaitGroup
		codes [2]int
		outs  [2]string
	)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var stderr string
			codes[i], outs[i], stderr = runCLI(t, ctx, append(append([]string{"run"}, args...), "--shard", fmt.Sprintf("%d/2", i), "--shard-wait", "60s", "--no-probe")...)
			outs[i] += stderr
		}()
	}
	wg.Wait()
	for i := range 2 {
		if codes[i] != 0 || !strings.Contains(outs[i], "all 2 shards joined") {
			t.Fatalf("shard %d/2: exit %d\n%s\nthe other shard:\n%s", i, codes[i], outs[i], outs[1-i])
		}
	}
	return outs
}

// readDoc reads a result document.
func readDoc(t *testing.T, path string) *report.Result {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r report.Result
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &r
}

// countRows counts the rows of inserts-deletes' table.
func countRows(t *testing.T, dsn string) (n int64) {
	t.Helper()
	withConn(t, dsn, func(ctx context.Context, c target.Conn, prefix string) {
		if _, err := target.QueryRow(ctx, c, "SELECT count(*) FROM "+prefix+"rows", []any{&n}); err != nil {
			t.Fatal(err)
		}
	})
	return n
}

// TestShardErrors: what cannot run sharded, or merge, says why in one
// line, and a shard whose partners never come gives up after
// --shard-wait naming them.
func TestShardErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "e.db")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"run", "bulk-load", "--batches", "1:100:x10", "--shard", "0/2"}, 2, "--batches ramps the batch size one step at a time: run it unsharded"},
		{[]string{"run", "inserts-deletes", "--shard", "2/2"}, 2, "--shard 2/2: I must be between 0 and 1"},
		{[]string{"run", "inserts-deletes", "--shard-wait", "5s"}, 2, "--shard-wait needs --shard"},
		{[]string{"run", "inserts-deletes", "--shard", "0/2", "--repeat", "2"}, 2, "--repeat and --shard are exclusive"},
		{[]string{"run", "inserts-deletes", "--shard", "0/4", "-c", "3"}, 2, "shards would have no worker; give at least 4 workers"},
		{[]string{"run", "inserts-deletes", "--shard", "0/4", "-c", "4", "--ops", "3"}, 2, "shards would have no request; give at least 4"},
		{[]string{"run", "single-inserts", "--shard", "0/2", "--durability", "relaxed", "--db", "mysql://root@127.0.0.1:1/x"}, 2, "changes innodb_flush_log_at_trx_commit for the whole server"},
		{[]string{"run", "sequential-selects", "--cold", "--shard", "0/2"}, 2, "run sequential-selects --cold unsharded"},
	} {
		args := append(tc.args, "--no-probe", "--out", dir)
		if !strings.Contains(strings.Join(tc.args, " "), "--db") {
			args = append(args, "--db", db)
		}
		code, stdout, stderr := runCLI(t, ctx, args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q, want %d and one line with %q\n%s", tc.args, code, stderr, tc.code, tc.want, stdout)
		}
	}

	// A shard alone: the other never joins.
	if code, _, stderr := runCLI(t, ctx, "prepare", "single-inserts", "--db", db); code != 0 {
		t.Fatalf("prepare: %s", stderr)
	}
	start := time.Now()
	code, stdout, stderr := runCLI(t, ctx, "run", "single-inserts", "--db", db, "--shard", "0/2", "--shard-wait", "1s", "-T", "1s", "-c", "2", "--no-probe", "--out", dir)
	if code == 0 || !strings.Contains(stderr, "1 of 2 shards joined within 1s (missing 1)") || time.Since(start) > time.Minute {
		t.Fatalf("a lone shard: exit %d, stderr %q\n%s", code, stderr, stdout)
	}
	// Before prepare, a shard does not create the table.
	code, _, stderr = runCLI(t, ctx, "run", "inserts-deletes", "--db", db, "--shard", "0/2", "-c", "2", "--no-probe", "--out", dir)
	if code == 0 || !strings.Contains(stderr, "sharded run: no ceiling table") || !strings.Contains(stderr, "once before starting them") || strings.Contains(stderr, "leave out --reuse") {
		t.Fatalf("unprepared shard: exit %d, %q; want the prepare before the shards, not --reuse (not given)", code, stderr)
	}
	code, _, stderr = runCLI(t, ctx, "run", "custom", "--file", example(t), "--db", db, "--shard", "0/2", "-c", "2", "--no-probe", "--out", dir)
	if code == 0 || !strings.Contains(stderr, "sharded run: no ceiling table") || !strings.Contains(stderr, "ceiling prepare custom --file") || strings.Contains(stderr, "leave out --reuse") {
		t.Fatalf("unprepared custom shard: exit %d, %q; want the prepare before the shards, not --reuse (not given)", code, stderr)
	}

	// Merge needs every shard of one run.
	code, stdout, stderr = runCLI(t, ctx, "run", "single-inserts", "--db", db, "-T", "1s", "--no-probe", "--out", filepath.Join(dir, "plain.json"))
	if code != 0 {
		t.Fatalf("run: %s%s", stdout, stderr)
	}
	code, _, stderr = runCLI(t, ctx, "merge", filepath.Join(dir, "plain.json"))
	if code != 2 || !strings.Contains(stderr, "is not a shard's result") {
		t.Fatalf("merge of an unsharded result: exit %d, %q", code, stderr)
	}
}

// TestShardedTPCC: TPC-C runs as two shards on one prepared dataset; the
// merge takes the figures counted from the database (NOPM, new orders)
// from one shard, where every shard counts every shard's new orders, and
// adds up the ones each process counted (New-Order rollbacks): the merged
// new orders match the merged New-Order requests, not twice them.
func TestShardedTPCC(t *testing.T) {
	testenv.EachEngine(t, "", func(t *testing.T, dsn string) {
		ctx := context.Background()
		defer runCLI(t, ctx, "cleanup", "tpcc", "--db", dsn)
		if code, stdout, stderr := runCLI(t, ctx, "prepare", "tpcc", "--warehouses", "1", "--db", dsn); code != 0 {
			t.Fatalf("prepare: exit %d\n%s%s", code, stdout, stderr)
		}
		out := t.TempDir()
		runShards(t, ctx, "tpcc", "--db", dsn, "-c", "4", "-T", "3s", "--out", out)
		merged := filepath.Join(t.TempDir(), "m.json")
		if code, stdout, stderr := runCLI(t, ctx, "merge", out, "--out", merged); code != 0 {
			t.Fatalf("merge: exit %d\n%s%s", code, stdout, stderr)
		}
		m := readDoc(t, merged)
		var rollbacks float64
		var shard0 map[string]float64
		entries, _ := os.ReadDir(out)
		for _, e := range entries {
			s := readDoc(t, filepath.Join(out, e.Name()))
			rollbacks += s.Figures["new_order_rollbacks"]
			if s.Load.Shard.I == 0 {
				shard0 = s.Figures
			}
		}
		no := float64(m.Summary.ByOp["new_order"].Requests)
		got := m.Figures["new_orders"]
		if m.Figures["nopm"] != shard0["nopm"] || got != shard0["new_orders"] || m.Figures["new_order_rollbacks"] != rollbacks {
			t.Fatalf("merged figures %v: nopm and new_orders must be shard 0's %v, new_order_rollbacks the sum %v", m.Figures, shard0, rollbacks)
		}
		// The database's count over shard 0's span against both
		// shards' requests: close, and far from twice as many.
		if no < 20 || got < 0.7*no || got > 1.2*no+10 {
			t.Fatalf("merged: %v new orders counted from the database for %v New-Order requests", got, no)
		}
	})
}

// TestShardedBulkLoad: two shards load the prepared empty table at once,
// each batch a block of ids of its own: no duplicate key, and the table
// ends with the merged rows (give or take the batches in flight at the
// end); no shard builds the indexes.
func TestShardedBulkLoad(t *testing.T) {
	testenv.EachEngine(t, "sqlite:"+filepath.Join(t.TempDir(), "b.db"), func(t *testing.T, dsn string) {
		ctx := context.Background()
		defer runCLI(t, ctx, "cleanup", "bulk-load", "--db", dsn)
		if code, stdout, stderr := runCLI(t, ctx, "prepare", "bulk-load", "--db", dsn); code != 0 {
			t.Fatalf("prepare: exit %d\n%s%s", code, stdout, stderr)
		}
		out := t.TempDir()
		outs := runShards(t, ctx, "bulk-load", "--batch", "100", "--db", dsn, "-c", "2", "-T", "1s", "--out", out)
		if strings.Contains(outs[0]+outs[1], "building secondary indexes") {
			t.Fatalf("a shard built the indexes:\n%s", outs[0])
		}
		merged := filepath.Join(t.TempDir(), "m.json")
		if code, stdout, stderr := runCLI(t, ctx, "merge", out, "--out", merged); code != 0 {
			t.Fatalf("merge: exit %d\n%s%s", code, stdout, stderr)
		}
		m := readDoc(t, merged)
		var n int64
		withConn(t, dsn, func(ctx context.Context, c target.Conn, prefix string) {
			if _, err := target.QueryRow(ctx, c, "SELECT count(*) FROM "+prefix+"bulk_rows", []any{&n}); err != nil {
				t.Fatal(err)
			}
		})
		fly := int64(m.Summary.InFlightAtEnd.Requests) * 100
		if m.Summary.Errors != 0 || m.Summary.Rows == 0 || n < m.Summary.Rows || n > m.Summary.Rows+fly {
			t.Fatalf("merged %d rows, %d errors %v; the table holds %d (want the merged rows, + up to %d in flight)", m.Summary.Rows, m.Summary.Errors, m.Summary.FirstErrors, n, fly)
		}
	})
}
