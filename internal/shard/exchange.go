package shard

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"time"
)

// ProbeTable holds what the shards of a knee search tell each other after
// each probe (Meeting.Exchange): each shard's figures, so that every shard
// judges the probe by all the shards' requests and they take the same
// next step.
const ProbeTable = "shard_probes"

// Tables are the tables the shards keep in ceiling's namespace: cleanup
// drops them with the last of the workloads' tables.
var Tables = []string{Table, ProbeTable}

// probeBody is ProbeTable's body: a text column that holds a latency
// histogram (MySQL's TEXT stops at 64 KiB).
func probeBody(engine string) string {
	text := "TEXT"
	if engine == "mysql" {
		text = "MEDIUMTEXT"
	}
	return "run_key VARCHAR(100) NOT NULL, probe INT NOT NULL, shard INT NOT NULL, posted_ms BIGINT NOT NULL, body " + text + " NOT NULL, PRIMARY KEY (run_key, probe, shard)"
}

// RoundKey is the key the shards meet under for round r of the run named
// key (a knee search's r-th probe): each round has its own meeting, so a
// shard still reading the last round's figures is never counted as
// joined to the next. It fits the meeting table's 100 characters.
func RoundKey(key string, r int) string {
	return fmt.Sprintf("%s#%d", shortKey(key), r)
}

// shortKey is key, or a hash of it when it leaves no room for a round's
// suffix.
func shortKey(key string) string {
	if len(key) <= 80 {
		return key
	}
	h := fnv.New64a()
	h.Write([]byte(key))
	return fmt.Sprintf("%.60s-%016x", key, h.Sum64())
}

// exchangePoll is how often a shard waiting for the others' figures looks.
const exchangePoll = 100 * time.Millisecond

// Exchange posts body as this shard's word on round r of the run named key
// and waits, up to wait, until every shard has posted its own; it returns
// the N bodies by shard. Call it between Meet (the round's meeting) and
// Leave: what was posted before the last shard joined the meeting is an
// earlier run's and is not read.
func (m *Meeting) Exchange(ctx context.Context, key string, r int, body []byte, wait time.Duration, progress io.Writer) ([][]byte, error) {
	tbl := m.t.Dialect().Table(ProbeTable)
	deadline := time.Now().Add(wait)
	lastSaid := time.Now()
	failed := 0
	// A shard that finds no table creates it, and may replace the one
	// this shard has just posted to: then it posts again.
	mine := false
	for {
		var (
			got [][]byte
			err error
		)
		if !mine {
			err = m.Post(ctx, key, r, body)
		}
		if err == nil {
			got, err = m.read(ctx, tbl, shortKey(key), r)
		}
		if err != nil {
			// The table replaced by a shard creating it just then?
			if failed++; failed > 5 || ctx.Err() != nil {
				return nil, fmt.Errorf("shard %s: round %d: %w", m.spec, r, err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(exchangePoll):
			}
			continue
		}
		failed = 0
		mine = got[m.spec.I] != nil
		var missing []int
		for i, b := range got {
			if b == nil {
				missing = append(missing, i)
			}
		}
		if len(missing) == 0 {
			return got, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("shard %s: shard %s did not post round %d within %v (stopped, or much slower than this one)", m.spec, joinInts(missing), r, wait)
		}
		if time.Since(lastSaid) >= 10*time.Second {
			lastSaid = time.Now()
			fmt.Fprintf(progress, "shard %s: waiting for shard %s's figures of round %d\n", m.spec, joinInts(missing), r)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("shard %s: interrupted while waiting for the other shards' figures of round %d", m.spec, r)
		case <-time.After(exchangePoll):
		}
	}
}

// Post writes body as this shard's word on round r of the run named key,
// without waiting for the others' (a shard that stops says why). It
// removes the shard's earlier rounds' rows: every shard has read them, or
// it could not have met this round.
func (m *Meeting) Post(ctx context.Context, key string, r int, body []byte) error {
	d := m.t.Dialect()
	if err := ensure(ctx, m.t, ProbeTable, probeBody(d.Engine)); err != nil {
		return fmt.Errorf("shard %s: %w", m.spec, err)
	}
	posted, _, err := m.dbNow(ctx)
	if err != nil {
		return fmt.Errorf("shard %s: %w", m.spec, err)
	}
	tbl, ph, key := d.Table(ProbeTable), d.Placeholder, shortKey(key)
	if _, err := m.conn.Exec(ctx, "DELETE FROM "+tbl+" WHERE run_key = "+ph(1)+" AND shard = "+ph(2), key, m.spec.I); err != nil {
		return fmt.Errorf("shard %s: post round %d: %w", m.spec, r, err)
	}
	if _, err := m.conn.Exec(ctx, "INSERT INTO "+tbl+" (run_key, probe, shard, posted_ms, body) VALUES ("+ph(1)+", "+ph(2)+", "+ph(3)+", "+ph(4)+", "+ph(5)+")",
		key, r, m.spec.I, posted, string(body)); err != nil {
		return fmt.Errorf("shard %s: post round %d: %w", m.spec, r, err)
	}
	return nil
}

// read returns round r's bodies posted since the last shard joined the
// meeting, by shard, nil where a shard has posted none.
func (m *Meeting) read(ctx context.Context, tbl, key string, r int) ([][]byte, error) {
	d := m.t.Dialect()
	rows, err := m.conn.Query(ctx, "SELECT shard, body FROM "+tbl+" WHERE run_key = "+d.Placeholder(1)+" AND probe = "+d.Placeholder(2)+" AND posted_ms >= "+d.Placeholder(3),
		key, r, m.lastMs)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	got := make([][]byte, m.spec.N)
	for rows.Next() {
		var (
			i    int64
			body string
		)
		if err := rows.Scan(&i, &body); err != nil {
			return nil, err
		}
		if i >= 0 && int(i) < m.spec.N {
			got[i] = []byte(body)
		}
	}
	return got, rows.Err()
}
