package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ceiling-db/ceiling/internal/metrics"
	"github.com/ceiling-db/ceiling/internal/target"
)

// statViews are the statistics views the sampler reads when the server
// has them: pg_stat_wal (14+), pg_stat_checkpointer (17+), pg_stat_io
// (16+); the others are older than any supported server.
var statViews = []string{
	"pg_stat_wal", "pg_stat_database", "pg_stat_bgwriter", "pg_stat_checkpointer", "pg_stat_io",
}

// singleRow maps the one-row views to the prefix of their raw keys.
var singleRow = []struct{ view, key, where string }{
	{"pg_stat_wal", "wal", ""},
	{"pg_stat_database", "database", " WHERE datname = current_database()"},
	{"pg_stat_bgwriter", "bgwriter", ""},
	{"pg_stat_checkpointer", "checkpointer", ""},
}

// probe holds the numeric columns of each statistics view the server has,
// found once per target; the queries are built from it.
type probe struct {
	cols      map[string][]string // view → numeric columns in catalog order
	ioText    bool                // pg_stat_io has backend_type, object, context
	blockSize float64
	// standby: the server is a hot standby, whose replay position is
	// read too (target.CtrReplayBytes).
	standby bool
}

// Sample implements target.Sampler. It reads every view in one round trip
// over the sampler's own session, reconnecting if that session was lost.
// Counters the server does not have are absent: pg_stat_wal's times
// unless track_wal_io_timing is on, blk_read_time/blk_write_time and
// pg_stat_io times unless track_io_timing is on, pg_stat_io before 16.
//
// PostgreSQL backends publish their statistics when they go idle, at most
// once a second, so the counters trail the work by up to about a second.
func (t *pgTarget) Sample(ctx context.Context) (target.Sample, error) {
	t.mu.Lock()
	closed := t.closed
	t.mu.Unlock()
	if closed {
		return target.Sample{}, errors.New("postgres: sample: target is closed")
	}

	t.sampleMu.Lock()
	defer t.sampleMu.Unlock()
	for attempt := 0; ; attempt++ {
		s, err := t.sample(ctx)
		if err == nil || attempt > 0 || Classify(err) != metrics.ErrConnLost || ctx.Err() != nil {
			return s, err
		}
		// The session was lost: try once more on a new one.
		if t.sampler != nil {
			_ = t.sampler.Close(ctx)
			t.sampler = nil
			t.samplerLost = true
		}
	}
}

// sample takes one sample; the caller holds t.sampleMu.
func (t *pgTarget) sample(ctx context.Context) (target.Sample, error) {
	if t.sampler == nil || t.sampler.IsClosed() {
		lost := t.samplerLost || t.sampler != nil
		c, err := t.connect(ctx, t.scfg)
		if err != nil {
			return target.Sample{}, fmt.Errorf("the sampler's session: %w", err) // "postgres: connect to …"
		}
		t.sampler, t.samplerLost = c, false
		if lost {
			// Whatever ended the sampler's session (a restart, an
			// administrator) may have ended the admin session, and the
			// namespace lock with it.
			t.recheckLock(ctx)
		}
	}
	// The sampler sessions' transactions committed before this read are
	// in its figures; this read's own is not (its snapshot is taken
	// inside it), so the count is taken first.
	own := float64(t.own.Load())
	start := time.Now()
	raw, io, tm, err := t.probe.read(ctx, t.sampler)
	if err != nil {
		return target.Sample{}, err
	}
	t.own.Add(1)
	end := time.Now()
	out := counters(raw, io, tm, t.probe.blockSize)
	if v, ok := out[target.CtrCommits]; ok {
		out[CtrSamplerXacts] = own
		out[target.CtrCommits] = v - own
	}
	t.addDiagnosis(ctx, t.sampler, out) // wait categories and CPU: see waits.go
	return target.Sample{At: start.Add(end.Sub(start) / 2), Counters: out}, nil
}

// CtrSamplerXacts counts the transactions ceiling's own sampler sessions
// committed in the target's database; the commits counter leaves them out
// (pg.xact_commit keeps the server's figure).
const CtrSamplerXacts = "pg.ceiling_sampler_xacts"

// blockSize is the server's block size in bytes.
func blockSize(settings map[string]string) float64 {
	bs, err := strconv.ParseFloat(settings["block_size"], 64)
	if err != nil || bs <= 0 {
		return 8192
	}
	return bs
}

// viewGives says, for missing_evidence, what a statistics view that the
// server lacks would have given.
var viewGives = map[string]string{
	"pg_stat_wal":          "PostgreSQL 14+: WAL records, bytes, writes and syncs",
	"pg_stat_checkpointer": "PostgreSQL 17+: checkpoints",
	"pg_stat_io":           "PostgreSQL 16+: data-file syncs, reads and writes by backend type",
}

// missing says, for Info, which evidence this server cannot give. A
// server before 17 counts its checkpoints in pg_stat_bgwriter, so the
// missing pg_stat_checkpointer is then not mentioned.
func (p *probe) missing(settings map[string]string) string {
	var m []string
	for _, v := range statViews {
		if len(p.cols[v]) > 0 || v == "pg_stat_checkpointer" && slices.Contains(p.cols["pg_stat_bgwriter"], "checkpoints_timed") {
			continue
		}
		if g := viewGives[v]; g != "" {
			v += " (" + g + ")"
		}
		m = append(m, v)
	}
	if settings["track_wal_io_timing"] != "on" {
		m = append(m, "WAL write/sync times (track_wal_io_timing is off)")
	}
	return strings.Join(m, ", ")
}

// probeViews finds the statistics views and their numeric columns.
func probeViews(ctx context.Context, c *pgx.Conn) (*probe, error) {
	rows, err := c.Query(ctx, `
		SELECT c.relname::text, a.attname::text, a.atttypid::regtype::text
		FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
		WHERE c.relnamespace = 'pg_catalog'::regnamespace AND c.relname = ANY($1)
		  AND a.attnum > 0 AND NOT a.attisdropped
		ORDER BY c.relname, a.attnum`, statViews)
	if err != nil {
		return nil, fmt.Errorf("postgres: sample: probe views: %w", err)
	}
	p := &probe{cols: map[string][]string{}}
	text := map[string]bool{}
	var view, col, typ string
	_, err = pgx.ForEachRow(rows, []any{&view, &col, &typ}, func() error {
		switch typ {
		case "bigint", "integer", "smallint", "double precision", "real", "numeric":
			p.cols[view] = append(p.cols[view], col)
		case "text":
			if view == "pg_stat_io" {
				text[col] = true
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: sample: probe views: %w", err)
	}
	p.ioText = text["backend_type"] && text["object"] && text["context"]
	return p, nil
}

// timing says which kinds of IO timing the server collects.
type timing struct {
	wal bool // track_wal_io_timing
	io  bool // track_io_timing
}

// ioRow is one row of pg_stat_io: NULL cells are left out of vals.
type ioRow struct {
	backendType, object, context string
	vals                         map[string]float64
}

// read runs the sampling queries as one batch. raw maps "<view
// key>.<column>" (e.g. "wal.wal_bytes") to the value; NULLs are left out.
func (p *probe) read(ctx context.Context, c *pgx.Conn) (map[string]float64, []ioRow, timing, error) {
	var tm timing
	b := &pgx.Batch{}
	b.Queue(`SELECT current_setting('track_wal_io_timing', true), current_setting('track_io_timing', true)`)
	if p.standby {
		b.Queue(`SELECT pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_last_wal_replay_lsn(), '0/0')::float8`)
	}
	var queued []int
	for i, v := range singleRow {
		if cols := p.cols[v.view]; len(cols) > 0 {
			b.Queue("SELECT " + floatList(cols) + " FROM pg_catalog." + v.view + v.where)
			queued = append(queued, i)
		}
	}
	ioCols := p.cols["pg_stat_io"]
	if p.ioText && len(ioCols) > 0 {
		b.Queue("SELECT backend_type, object, context, " + floatList(ioCols) + " FROM pg_catalog.pg_stat_io")
	}

	br := c.SendBatch(ctx, b)
	fail := func(err error) (map[string]float64, []ioRow, timing, error) {
		_ = br.Close()
		return nil, nil, tm, fmt.Errorf("postgres: sample: %w", err)
	}
	var walTiming, ioTiming *string
	if err := br.QueryRow().Scan(&walTiming, &ioTiming); err != nil {
		return fail(err)
	}
	tm.wal = walTiming != nil && *walTiming == "on"
	tm.io = ioTiming != nil && *ioTiming == "on"

	raw := map[string]float64{}
	if p.standby {
		var replayed *float64
		if err := br.QueryRow().Scan(&replayed); err != nil {
			return fail(fmt.Errorf("read the replay position: %w", err))
		}
		if replayed != nil {
			raw["standby.replay_bytes"] = *replayed
		}
	}
	for _, i := range queued {
		v := singleRow[i]
		cols := p.cols[v.view]
		vals := make([]*float64, len(cols))
		dest := make([]any, len(cols))
		for j := range vals {
			dest[j] = &vals[j]
		}
		err := br.QueryRow().Scan(dest...)
		if errors.Is(err, pgx.ErrNoRows) {
			continue // e.g. no pg_stat_database row yet
		}
		if err != nil {
			return fail(fmt.Errorf("read %s: %w", v.view, err))
		}
		for j, col := range cols {
			if vals[j] != nil {
				raw[v.key+"."+col] = *vals[j]
			}
		}
	}

	var io []ioRow
	if p.ioText && len(ioCols) > 0 {
		rows, err := br.Query()
		if err != nil {
			return fail(fmt.Errorf("read pg_stat_io: %w", err))
		}
		vals := make([]*float64, len(ioCols))
		var r ioRow
		dest := []any{&r.backendType, &r.object, &r.context}
		for j := range vals {
			dest = append(dest, &vals[j])
		}
		for rows.Next() {
			if err := rows.Scan(dest...); err != nil {
				rows.Close()
				return fail(fmt.Errorf("read pg_stat_io: %w", err))
			}
			row := ioRow{backendType: r.backendType, object: r.object, context: r.context, vals: map[string]float64{}}
			for j, col := range ioCols {
				if vals[j] != nil {
					row.vals[col] = *vals[j]
				}
			}
			io = append(io, row)
		}
		if err := rows.Err(); err != nil {
			return fail(fmt.Errorf("read pg_stat_io: %w", err))
		}
	}
	if err := br.Close(); err != nil {
		return nil, nil, tm, fmt.Errorf("postgres: sample: %w", err)
	}
	return raw, io, tm, nil
}

// floatList is "a::float8, b::float8, …" with quoted column names.
func floatList(cols []string) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = pgx.Identifier{c}.Sanitize() + "::float8"
	}
	return strings.Join(parts, ", ")
}

// counters turns raw view values into sample counters: the well-known
// target.Ctr* names where PostgreSQL has the figure, plus every column
// under "pg.<column>" (pg_stat_wal, pg_stat_database, pg_stat_bgwriter),
// "pg.checkpointer.<column>" and "pg.io.<object>.<column>" (pg_stat_io
// summed over backend types and contexts, object spaces → '_').
func counters(raw map[string]float64, io []ioRow, tm timing, blockSize float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range raw {
		view, col, _ := strings.Cut(k, ".")
		switch view {
		case "wal":
			if strings.HasSuffix(col, "_time") && !tm.wal {
				continue // zero unless timed: not measured
			}
			out["pg."+col] = v
		case "database":
			if (col == "blk_read_time" || col == "blk_write_time") && !tm.io {
				continue
			}
			out["pg."+col] = v
		case "bgwriter":
			out["pg."+col] = v
		case "checkpointer":
			out["pg.checkpointer."+col] = v
		}
	}
	get := func(k string) (float64, bool) { v, ok := raw[k]; return v, ok }
	copyTo := func(ctr, k string) {
		if v, ok := get(k); ok {
			out[ctr] = v
		}
	}

	// A hot standby's replay of the primary's WAL.
	copyTo(target.CtrReplayBytes, "standby.replay_bytes")

	// Log (WAL).
	copyTo(target.CtrLogBytes, "wal.wal_bytes")
	copyTo(target.CtrLogWrites, "wal.wal_write")
	copyTo(target.CtrLogSyncs, "wal.wal_sync")
	if tm.wal {
		copyTo(target.CtrLogWriteMs, "wal.wal_write_time")
		copyTo(target.CtrLogSyncMs, "wal.wal_sync_time")
	}

	// Transactions and the buffer cache, for the current database.
	copyTo(target.CtrCommits, "database.xact_commit")
	copyTo(target.CtrRollbacks, "database.xact_rollback")
	read, okRead := get("database.blks_read")
	hit, okHit := get("database.blks_hit")
	if okRead {
		out[target.CtrDataReads] = read
		out[target.CtrDataBytesRead] = read * blockSize
	}
	if okHit {
		out[target.CtrCacheHits] = hit
	}
	if okRead && okHit {
		out[target.CtrCacheReads] = read + hit
	}

	// Checkpoints: pg_stat_bgwriter up to 16, pg_stat_checkpointer from 17
	// (num_done, 18+, leaves out skipped checkpoints).
	if a, ok := get("bgwriter.checkpoints_timed"); ok {
		if b, ok := get("bgwriter.checkpoints_req"); ok {
			out[target.CtrCheckpoints] = a + b
		}
	} else if d, ok := get("checkpointer.num_done"); ok {
		out[target.CtrCheckpoints] = d
	} else if a, ok := get("checkpointer.num_timed"); ok {
		if b, ok := get("checkpointer.num_requested"); ok {
			out[target.CtrCheckpoints] = a + b
		}
	}

	// pg_stat_io, summed per object.
	agg := map[string]map[string]float64{}
	for _, r := range io {
		obj := strings.ReplaceAll(r.object, " ", "_")
		m := agg[obj]
		if m == nil {
			m = map[string]float64{}
			agg[obj] = m
		}
		timed := tm.io
		if r.object == "wal" {
			timed = tm.wal
		}
		opBytes, hasOpBytes := r.vals["op_bytes"]
		for col, v := range r.vals {
			if col == "op_bytes" || strings.HasSuffix(col, "_time") && !timed {
				continue
			}
			m[col] += v
			if hasOpBytes {
				switch col { // 16 and 17 give op_bytes; 18 gives *_bytes
				case "reads":
					m["read_bytes"] += v * opBytes
				case "writes":
					m["write_bytes"] += v * opBytes
				case "extends":
					m["extend_bytes"] += v * opBytes
				}
			}
		}
	}
	for obj, m := range agg {
		for col, v := range m {
			out["pg.io."+obj+"."+col] = v
		}
	}

	// Data-file writes: bgwriter's split up to 16, else pg_stat_io.
	cp, ok1 := get("bgwriter.buffers_checkpoint")
	cl, ok2 := get("bgwriter.buffers_clean")
	be, ok3 := get("bgwriter.buffers_backend")
	if ok1 && ok2 && ok3 {
		out[target.CtrDataWrites] = cp + cl + be
	} else if w, ok := agg["relation"]["writes"]; ok {
		out[target.CtrDataWrites] = w
	}
	if w, ok := out[target.CtrDataWrites]; ok {
		out[target.CtrDataBytesWrite] = w * blockSize
	}
	if s, ok := agg["relation"]["fsyncs"]; ok {
		out[target.CtrDataSyncs] = s
	}

	// From 18, WAL writes and syncs moved from pg_stat_wal to pg_stat_io.
	if wal := agg["wal"]; wal != nil {
		fill := func(ctr, col string) {
			if _, have := out[ctr]; have {
				return
			}
			if v, ok := wal[col]; ok {
				out[ctr] = v
			}
		}
		fill(target.CtrLogWrites, "writes")
		fill(target.CtrLogSyncs, "fsyncs")
		if tm.wal {
			fill(target.CtrLogWriteMs, "write_time")
			fill(target.CtrLogSyncMs, "fsync_time")
		}
	}
	return out
}
