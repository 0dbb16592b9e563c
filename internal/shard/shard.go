// Package shard lets several ceiling processes load one database together
// (run --shard I/N, DESIGN.md section 8): how a run's workers, requests and
// rate are split between the shards, and how the shards meet in the
// database before they start, so that they measure the same span of time.
//
// The shards meet through a table of ceiling's own namespace (shards): each
// writes a row under the run's key, then waits until all N have, and all
// start at the same moment by the database's clock, so that the shards'
// clocks need not agree.
package shard

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ceiling-db/ceiling/internal/target"
)

// Spec is one shard of several: shard I of N, I from 0 to N-1 (as a
// Kubernetes Indexed Job numbers its pods: JOB_COMPLETION_INDEX).
type Spec struct {
	I, N int
}

// MaxShards is the most shards a run may have.
const MaxShards = 1000

// Parse reads "I/N".
func Parse(s string) (Spec, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "/")
	i, ierr := strconv.Atoi(a)
	n, nerr := strconv.Atoi(b)
	if !ok || ierr != nil || nerr != nil {
		return Spec{}, fmt.Errorf("--shard %q is not I/N (e.g. 0/3: the first of three shards)", s)
	}
	if n < 1 || n > MaxShards {
		return Spec{}, fmt.Errorf("--shard %s: N must be between 1 and %d", s, MaxShards)
	}
	if i < 0 || i >= n {
		return Spec{}, fmt.Errorf("--shard %s: I must be between 0 and %d (shards are numbered from 0)", s, n-1)
	}
	return Spec{I: i, N: n}, nil
}

func (s Spec) String() string { return fmt.Sprintf("%d/%d", s.I, s.N) }

// Share is shard s's part of total (workers or requests) and the index
// of its first: an even split, the first total mod N shards taking one
// more.
func (s Spec) Share(total int64) (count, first int64) {
	n, i := int64(s.N), int64(s.I)
	q, r := total/n, total%n
	count = q
	if i < r {
		count++
	}
	return count, i*q + min(i, r)
}

// Table is the meeting table (unqualified, in ceiling's namespace).
const Table = "shards"

const tableBody = "run_key VARCHAR(100) NOT NULL, shard INT NOT NULL, shards INT NOT NULL, joined_ms BIGINT NOT NULL, token VARCHAR(40) NOT NULL, host VARCHAR(200) NOT NULL, PRIMARY KEY (run_key, shard)"

// StartDelay is how long after the last shard joined they all start:
// time for each to see it.
const StartDelay = 2 * time.Second

// poll is how often a waiting shard looks at the table.
const poll = 250 * time.Millisecond

// Meeting is a shard's row in the meeting table, until Leave.
type Meeting struct {
	t     target.Target
	conn  target.Conn
	key   string
	spec  Spec
	token string
	// Start is when every shard starts, on this host's clock.
	Start time.Time
	// StartMs is Start on the database's clock, milliseconds since 1970.
	StartMs int64
	// lastMs is when the last shard joined, on the database's clock:
	// what was posted before is an earlier run's.
	lastMs int64
	// joinedMs is when this shard joined, on the database's clock.
	joinedMs int64
	// Hosts are the shards' hosts, by shard.
	Hosts []string
}

// nowSQL reads the database's clock in milliseconds since 1970.
func nowSQL(engine string) string {
	switch engine {
	case "postgres":
		return "SELECT CAST(extract(epoch from clock_timestamp()) * 1000 AS BIGINT)"
	case "mysql":
		return "SELECT CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)"
	default:
		return "SELECT CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)"
	}
}

// Meet writes shard s's row under key and waits, up to wait, until all
// the shards have, then until their common start (StartDelay after the
// last joined, on the database's clock). Progress lines go to progress.
// The shards must share key: it names the run (its workload and load),
// so that shards started with different settings never meet.
//
// When all the shards joined but ctx ended before their start, Meet
// returns the meeting with the error (ErrStartInterrupted): the others
// are starting, and the caller may tell them (Post) before it leaves.
func Meet(ctx context.Context, t target.Target, key string, s Spec, wait time.Duration, progress io.Writer) (*Meeting, error) {
	conn, err := t.Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("shard %s: connect to meet the other shards: %w", s, err)
	}
	m := &Meeting{t: t, conn: conn, key: key, spec: s, token: newToken()}
	if err := m.meet(ctx, wait, progress); err != nil {
		if errors.Is(err, ErrStartInterrupted) {
			return m, err
		}
		m.Leave(context.WithoutCancel(ctx))
		return nil, err
	}
	return m, nil
}

// ErrStartInterrupted is Meet's error when the shards met but ctx ended
// before their start.
var ErrStartInterrupted = errors.New("interrupted before the shards' start")

func newToken() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// ensureTable creates the meeting table unless it is there; shards that
// create it at once may fail or replace each other's: they retry, and
// each writes its row again when it finds it gone.
func ensureTable(ctx context.Context, t target.Target) error {
	return ensure(ctx, t, Table, tableBody)
}

// ensure creates table name with body unless it is there (ensureTable).
func ensure(ctx context.Context, t target.Target, name, body string) error {
	var err error
	for range 5 {
		var have []string
		if have, err = t.Schema().Tables(ctx); err == nil && slices.Contains(have, name) {
			return nil
		}
		if err == nil {
			if err = t.Schema().CreateTable(ctx, name, body); err == nil {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("create the table %s: %w", t.Dialect().Table(name), err)
}

// dbNow reads the database's clock and its offset from this host's: the
// database's time at the middle of the round trip, less this host's.
func (m *Meeting) dbNow(ctx context.Context) (ms int64, offset time.Duration, err error) {
	t0 := time.Now()
	if _, err = target.QueryRow(ctx, m.conn, nowSQL(m.t.Dialect().Engine), []any{&ms}); err != nil {
		return 0, 0, fmt.Errorf("read the database's clock: %w", err)
	}
	mid := t0.Add(time.Since(t0) / 2)
	return ms, time.UnixMilli(ms).Sub(mid), nil
}

func (m *Meeting) meet(ctx context.Context, wait time.Duration, progress io.Writer) error {
	if err := ensureTable(ctx, m.t); err != nil {
		return fmt.Errorf("shard %s: %w", m.spec, err)
	}
	joined, offset, err := m.dbNow(ctx)
	if err != nil {
		return fmt.Errorf("shard %s: %w", m.spec, err)
	}
	m.joinedMs = joined
	host, _ := os.Hostname()
	if len(host) > 200 {
		host = host[:200]
	}
	writeOnce := func() error { return m.putRow(ctx, m.spec.I, joined, host) }
	// A shard creating the table at the same moment may have it gone
	// (replaced) just then: make sure it is there, and write again.
	write := func() error {
		var err error
		for range 5 {
			if err = writeOnce(); err == nil {
				return nil
			}
			if terr := ensureTable(ctx, m.t); terr != nil {
				return terr
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
		}
		return err
	}
	if err := write(); err != nil {
		return fmt.Errorf("shard %s: join the meeting table: %w", m.spec, err)
	}
	fmt.Fprintf(progress, "shard %s: waiting for the other shards (run key %s, up to %v)\n", m.spec, m.key, wait)
	deadline := time.Now().Add(wait)
	lastSaid := time.Now()
	failed := 0
	for {
		st, err := m.look(ctx, joined-wait.Milliseconds())
		if err != nil {
			// The table replaced by a shard creating it just then?
			if failed++; failed > 5 || ensureTable(ctx, m.t) != nil {
				return fmt.Errorf("shard %s: read the meeting table: %w", m.spec, err)
			}
			continue
		}
		failed = 0
		switch {
		case st.other != "":
			return fmt.Errorf("shard %s: %s", m.spec, st.other)
		case !st.mine:
			if err := write(); err != nil { // replaced by a shard creating the table
				return fmt.Errorf("shard %s: join the meeting table: %w", m.spec, err)
			}
			continue
		case len(st.started) > 0:
			return fmt.Errorf("shard %s: shard %s started without this one (they had met before it joined): a shard cannot join a run under way (a replacement for one that stopped, or a second run under the same key); start every shard again, or give this run its own --shard-key", m.spec, joinInts(st.started))
		case len(st.missing) == 0:
			m.markStarted(ctx, host)
			m.Hosts = st.hosts
			m.lastMs = st.last
			m.StartMs = st.last + StartDelay.Milliseconds()
			m.Start = time.UnixMilli(m.StartMs).Add(-offset)
			fmt.Fprintf(progress, "shard %s: all %d shards joined; starting together in %.1fs\n", m.spec, m.spec.N, time.Until(m.Start).Seconds())
			if err := sleepUntil(ctx, m.Start); err != nil {
				return fmt.Errorf("shard %s: %w", m.spec, ErrStartInterrupted)
			}
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("shard %s: %d of %d shards joined within %v (missing %s): start every shard with the same workload and load flags, only --shard differing, and the same --shard-key if one is given",
				m.spec, m.spec.N-len(st.missing), m.spec.N, wait, joinInts(st.missing))
		}
		if time.Since(lastSaid) >= 10*time.Second {
			lastSaid = time.Now()
			fmt.Fprintf(progress, "shard %s: %d of %d shards joined (missing %s)\n", m.spec, m.spec.N-len(st.missing), m.spec.N, joinInts(st.missing))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("shard %s: interrupted while waiting for the other shards (%d of %d joined)", m.spec, m.spec.N-len(st.missing), m.spec.N)
		case <-time.After(poll):
		}
	}
}

// markStarted writes this shard's started marker, a row numbered -1-I
// stamped by the database's clock: a shard that joins after it (a
// replacement for a shard that stopped) finds the run under way and is
// refused. Best effort: without it, a late shard starts as it would have.
func (m *Meeting) markStarted(ctx context.Context, host string) {
	now, _, err := m.dbNow(ctx)
	if err != nil {
		return
	}
	_ = m.putRow(ctx, -1-m.spec.I, now, host)
}

// putRow writes the meeting table's row shard (this shard's, or its
// started marker) under the run's key, replacing an earlier one.
func (m *Meeting) putRow(ctx context.Context, shard int, ms int64, host string) error {
	d := m.t.Dialect()
	tbl, ph := d.Table(Table), d.Placeholder
	if _, err := m.conn.Exec(ctx, "DELETE FROM "+tbl+" WHERE run_key = "+ph(1)+" AND shard = "+ph(2), m.key, shard); err != nil {
		return err
	}
	_, err := m.conn.Exec(ctx, "INSERT INTO "+tbl+" (run_key, shard, shards, joined_ms, token, host) VALUES ("+
		ph(1)+", "+ph(2)+", "+ph(3)+", "+ph(4)+", "+ph(5)+", "+ph(6)+")", m.key, shard, m.spec.N, ms, m.token, host)
	return err
}

// state is what the meeting table says of the run.
type state struct {
	mine    bool   // this shard's row is there
	other   string // why the meeting cannot go on (another process as this shard, another N)
	missing []int  // shards not joined
	started []int  // shards that started before this one joined (their markers)
	last    int64  // the latest join, database ms
	hosts   []string
}

// look reads the run's rows joined since notBefore (older ones are an
// earlier run's, left by a shard that did not leave).
func (m *Meeting) look(ctx context.Context, notBefore int64) (state, error) {
	d := m.t.Dialect()
	rows, err := m.conn.Query(ctx, "SELECT shard, shards, joined_ms, token, host FROM "+d.Table(Table)+
		" WHERE run_key = "+d.Placeholder(1)+" AND joined_ms >= "+d.Placeholder(2), m.key, notBefore)
	if err != nil {
		return state{}, err
	}
	defer rows.Close()
	st := state{hosts: make([]string, m.spec.N)}
	seen := make([]bool, m.spec.N)
	for rows.Next() {
		var (
			i, n        int64
			joined      int64
			token, host string
		)
		if err := rows.Scan(&i, &n, &joined, &token, &host); err != nil {
			return state{}, err
		}
		switch {
		case int(n) != m.spec.N:
			st.other = fmt.Sprintf("shard %d joined as one of %d shards (on %s), this one of %d: give every shard the same N", i, n, host, m.spec.N)
		case i < 0:
			if joined < m.joinedMs && -1-int(i) != m.spec.I {
				st.started = append(st.started, -1-int(i))
			}
		case int(i) == m.spec.I && token != m.token:
			st.other = fmt.Sprintf("another ceiling (on %s) joined as shard %s too: give each shard its own I", host, m.spec)
		case i >= 0 && int(i) < m.spec.N:
			seen[i] = true
			st.hosts[i] = host
			st.last = max(st.last, joined)
			if int(i) == m.spec.I {
				st.mine = true
			}
		}
	}
	if err := rows.Err(); err != nil {
		return state{}, err
	}
	for i, ok := range seen {
		if !ok {
			st.missing = append(st.missing, i)
		}
	}
	return st, nil
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

func sleepUntil(ctx context.Context, at time.Time) error {
	d := time.Until(at)
	if d <= 0 {
		return nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-tm.C:
		return nil
	}
}

// Leave removes the shard's row (so that the next run under the same
// key does not count it) and closes the meeting's connection. ctx should
// outlive an interruption.
func (m *Meeting) Leave(ctx context.Context) {
	if m == nil || m.conn == nil {
		return
	}
	d := m.t.Dialect()
	_, _ = m.conn.Exec(ctx, "DELETE FROM "+d.Table(Table)+" WHERE run_key = "+d.Placeholder(1)+" AND (shard = "+d.Placeholder(2)+" OR shard = "+d.Placeholder(3)+") AND token = "+d.Placeholder(4), m.key, m.spec.I, -1-m.spec.I, m.token)
	_ = m.conn.Close()
	m.conn = nil
}
