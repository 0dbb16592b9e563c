package tpcc

// The driver side: run flags, the workers (one virtual user each), the
// transaction mix, keying and thinking times, retries, and the figures
// counted from the database (NOPM) and from the server (TPM).

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"

	"github.com/ceiling-db/ceiling/internal/metrics"
	"github.com/ceiling-db/ceiling/internal/target"
	"github.com/ceiling-db/ceiling/internal/workload"
)

// runConfig is the run configuration (ceiling run tpcc).
type runConfig struct {
	allWarehouses  bool   // --all-warehouses: a random warehouse per transaction
	keyingThinking bool   // --keying-thinking: the specification's keying and think times
	procedures     bool   // --procedures: each transaction is one call of a server-side function (procs.go)
	seed           uint64 // the run's random choices (flag --seed unless the loader owns it)
	solo           int    // 1 + the only operation workers made now run (Isolate); 0 = the mix

	once    sync.Once
	consts  Constants // NURand C constants of the run (RunConstants), fixed once per run
	stats   runStats
	seedFor func() uint64

	mu   sync.Mutex
	made map[int]uint64 // workers made per worker id: a reconnect draws a new stream
}

// runStats are the driver's own counters, shared by all workers. They are
// cumulative over the process; Observe reads them at the edges of the
// measured phase.
type runStats struct {
	retries       atomic.Int64 // transactions retried after a deadlock, serialization failure or lock timeout
	noRollbacks   atomic.Int64 // New-Order transactions rolled back on purpose (unused item, clause 2.4.2.3)
	commits       atomic.Int64 // transactions ceiling committed
	rollbacks     atomic.Int64 // transactions ceiling rolled back (on purpose or after an error)
	emptyDelivery atomic.Int64 // districts a Delivery found without an undelivered order (clause 2.7.4.2)
}

// Operation indexes, in Ops order.
const (
	OpNewOrder = iota
	OpPayment
	OpOrderStatus
	OpDelivery
	OpStockLevel
	numOps
)

// Mix is the transaction mix in per mille, in operation order: the
// specification's minimum mix (clause 5.2.3) as HammerDB runs it, 45% New-Order,
// 43% Payment and 4% each for the other three.
var Mix = [numOps]int{OpNewOrder: 450, OpPayment: 430, OpOrderStatus: 40, OpDelivery: 40, OpStockLevel: 40}

// Minimum keying times and mean think times per operation (clause 5.2.5).
// Think times are drawn from a negative exponential distribution truncated
// at 10 times the mean.
var (
	keyingTime = [numOps]time.Duration{18 * time.Second, 3 * time.Second, 2 * time.Second, 2 * time.Second, 2 * time.Second}
	thinkMean  = [numOps]time.Duration{12 * time.Second, 12 * time.Second, 10 * time.Second, 5 * time.Second, 5 * time.Second}
)

// MaxTpmCPerWarehouse is the highest New-Order rate per warehouse that the
// keying and think times allow with the specification's 10 terminals per
// warehouse: about 12.86 tpmC, the figure HammerDB's efficiency uses.
const MaxTpmCPerWarehouse = 12.86

// maxAttempts bounds how many times a transaction is tried when it fails
// with a deadlock, a serialization failure or a lock timeout.
const maxAttempts = 5

func (w *Workload) bindRunFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&w.run.allWarehouses, "all-warehouses", false, "run: each transaction picks a random warehouse (default: each virtual user has a home warehouse, worker id mod W + 1)")
	fs.BoolVar(&w.run.keyingThinking, "keying-thinking", false, "run: wait the specification's keying and think times around each transaction (off by default, like HammerDB); reports the efficiency against the 12.86 tpmC/warehouse maximum")
	fs.BoolVar(&w.run.procedures, "procedures", false, "run: each transaction is one call of a server-side routine, one round trip, as HammerDB runs TPROC-C (PostgreSQL: PL/pgSQL functions in each session's temporary schema; MySQL/MariaDB: stored procedures ceiling_tpcc_*, made when the run starts, dropped by cleanup tpcc); default: statement by statement from the client")
	// The seed of the run's random choices. The loader may own --seed (the
	// data's seed); the run's choices then follow the same flag.
	if fl := fs.Lookup("seed"); fl != nil {
		w.run.seedFor = func() uint64 {
			var v uint64
			_, _ = fmt.Sscan(fl.Value.String(), &v)
			return v
		}
		return
	}
	fs.Uint64Var(&w.run.seed, "seed", 1, "run: seed of the transactions' random choices (the same seed gives the same inputs per worker)")
	w.run.seedFor = func() uint64 { return w.run.seed }
}

func (w *Workload) validateRun() error { return nil }

func (w *Workload) runParams() map[string]any {
	return map[string]any{
		"all_warehouses":  w.run.allWarehouses,
		"keying_thinking": w.run.keyingThinking,
		"procedures":      w.run.procedures,
		"seed":            w.runSeed(),
		"new_order_pct":   45.0, "payment_pct": 43.0, "order_status_pct": 4.0, "delivery_pct": 4.0, "stock_level_pct": 4.0,
	}
}

// NoByteCounts implements workload.NoByteCounts: a transaction's rows are
// counted, not their data bytes (TPC-C's figure is NOPM).
func (w *Workload) NoByteCounts() {}

// Ops implements workload.Workload.
func (w *Workload) Ops() []string {
	return []string{"new_order", "payment", "order_status", "delivery", "stock_level"}
}

func (w *Workload) runSeed() uint64 {
	if w.run.seedFor == nil {
		return w.run.seed
	}
	return w.run.seedFor()
}

// NewWorker implements workload.Workload. Worker id is one virtual user;
// its home warehouse is id mod W + 1.
func (w *Workload) NewWorker(ctx context.Context, t target.Target, conn target.Conn, id int) (workload.Worker, error) {
	if w.Warehouses < 1 {
		return nil, errors.New("tpcc: no warehouses; run `ceiling prepare tpcc` first")
	}
	w.run.once.Do(func() {
		w.run.consts = RunConstants(w.loadConstants(), rand.New(rand.NewPCG(w.runSeed(), 0xc0ffee)))
	})
	k := &vuser{
		w:    w,
		t:    t,
		conn: conn,
		q:    newTxnSQL(t.Dialect()),
		rng:  rand.New(rand.NewPCG(w.runSeed(), w.stream(id))),
		home: id%w.Warehouses + 1,
		// The terminal's own district for Stock-Level (clause 2.8.1.1):
		// workers id, id+W, id+2W … of one warehouse take districts 1, 2, 3 ….
		district: id/w.Warehouses%DistrictsPerWH + 1,
		next:     -1,
		prev:     -1,
		solo:     w.run.solo,
	}
	k.p = picker{rng: k.rng, c: w.run.consts}
	if w.run.procedures {
		k.calls = &mysqlCalls
		if t.Dialect().Engine == "postgres" {
			k.calls = &pgCalls
			if err := createProcs(ctx, conn, t.Dialect()); err != nil {
				return nil, err
			}
		}
	}
	return k, nil
}

// stream returns the random stream of worker id's next incarnation: the
// first is fixed by --seed and the id; the worker made after a reconnect
// gets a stream of its own instead of replaying the first one's inputs.
func (w *Workload) stream(id int) uint64 {
	w.run.mu.Lock()
	defer w.run.mu.Unlock()
	if w.run.made == nil {
		w.run.made = map[int]uint64{}
	}
	n := w.run.made[id]
	w.run.made[id] = n + 1
	return uint64(id) + 1 + n<<32
}

// vuser is one virtual user (a terminal, in the specification's words).
// It is used by one goroutine.
type vuser struct {
	w        *Workload
	t        target.Target
	conn     target.Conn
	q        *txnSQL
	calls    *procCalls // --procedures: this engine's calls
	rng      *rand.Rand
	p        picker
	home     int // home warehouse
	district int // Stock-Level's district in the home warehouse
	next     int // operation chosen by Pause, or -1
	solo     int // 1 + the only operation this worker runs (Isolate); 0 = the mix
	prev     int // previous operation (for its think time), or -1
	// timer for keying and thinking (reused)
	timer *time.Timer
}

var (
	_ workload.Pauser        = (*vuser)(nil)
	_ workload.PauseDeclarer = (*Workload)(nil)
)

// WorkersPause implements workload.PauseDeclarer: every virtual user is a
// Pauser (its Pause returns at once without --keying-thinking).
func (w *Workload) WorkersPause() bool { return true }

// ClosedLoopOnly implements workload.ClosedLoopOnly: with
// --keying-thinking the virtual users pace themselves.
func (w *Workload) ClosedLoopOnly() string {
	if w.run.keyingThinking {
		return "--keying-thinking's keying and think times"
	}
	return ""
}

// Isolate implements workload.Isolator.
func (w *Workload) Isolate(op int) {
	if op < 0 || op >= numOps {
		op = -1
	}
	w.run.solo = op + 1
}

var _ workload.Isolator = (*Workload)(nil)

// IsolationBudget implements workload.Isolator. Delivery alone is bounded
// by the undelivered orders: each Delivery takes the oldest one of every
// district of its warehouse, so the budget is 90% of the smallest
// district's count, spread so that the workers sharing a home warehouse
// (the runner gives every worker an equal share of the requests) stay
// within that warehouse's orders; with --all-warehouses, times the
// warehouses. The other transactions are unbounded.
func (w *Workload) IsolationBudget(ctx context.Context, t target.Target, op, threads int) (int64, string, error) {
	if op != OpDelivery {
		return 0, "", nil
	}
	conn, err := t.Connect(ctx)
	if err != nil {
		return 0, "", fmt.Errorf("tpcc: count undelivered orders: %w", err)
	}
	defer conn.Close()
	d := t.Dialect()
	rows, err := conn.Query(ctx, "SELECT COUNT(*) FROM "+d.Table(TNewOrder)+" GROUP BY no_w_id, no_d_id")
	if err != nil {
		return 0, "", fmt.Errorf("tpcc: count undelivered orders: %w", err)
	}
	defer rows.Close()
	groups, least := 0, int64(-1)
	for rows.Next() {
		var n int64
		if err := rows.Scan(&n); err != nil {
			return 0, "", fmt.Errorf("tpcc: count undelivered orders: %w", err)
		}
		groups++
		if least < 0 || n < least {
			least = n
		}
	}
	if err := rows.Err(); err != nil {
		return 0, "", fmt.Errorf("tpcc: count undelivered orders: %w", err)
	}
	if groups < w.Warehouses*DistrictsPerWH {
		least = 0 // a district with no undelivered order at all
	}
	budget := deliveryBudget(least, w.Warehouses, threads, w.run.allWarehouses)
	if budget < 1 {
		return -1, "no undelivered orders left in some district (run the mix or New-Order longer)", nil
	}
	return budget, fmt.Sprintf("bounded by the undelivered orders: at most %d deliveries", budget), nil
}

// deliveryBudget is how many Deliveries alone `threads` workers may run
// when the district with the fewest undelivered orders has least of them:
// 90% of least per warehouse, spread so that the workers sharing a home
// warehouse (each worker gets an equal share of the requests) stay within
// it; with all warehouses, the deliveries spread over every warehouse.
func deliveryBudget(least int64, warehouses, threads int, allWarehouses bool) int64 {
	perWH := least * 9 / 10
	switch {
	case warehouses < 1 || threads < 1 || perWH < 1:
		return 0
	case allWarehouses:
		return perWH * int64(warehouses)
	case threads <= warehouses:
		return perWH * int64(threads)
	default:
		// The busiest warehouse has ceil(threads/W) workers.
		most := int64((threads + warehouses - 1) / warehouses)
		return perWH * int64(threads) / most
	}
}

// pick draws an operation from Mix (or returns the isolated one).
func (k *vuser) pick() int {
	if k.solo > 0 {
		return k.solo - 1
	}
	x := k.rng.IntN(1000)
	for op, m := range Mix {
		if x < m {
			return op
		}
		x -= m
	}
	return OpStockLevel
}

// warehouse returns the warehouse of the next transaction.
func (k *vuser) warehouse() int {
	if k.w.run.allWarehouses {
		return k.rng.IntN(k.w.Warehouses) + 1
	}
	return k.home
}

// Pause implements workload.Pauser: with --keying-thinking it waits the
// previous transaction's think time and the next one's keying time
// (outside the transactions' latency; the runner counts it in the
// result's client.think_share); without, it returns at once.
func (k *vuser) Pause(ctx context.Context) error {
	if !k.w.run.keyingThinking || k.solo > 0 {
		return nil
	}
	k.next = k.pick()
	d := keyingTime[k.next]
	if k.prev >= 0 {
		d += workload.ThinkTime(k.rng, thinkMean[k.prev])
	}
	return workload.Wait(ctx, &k.timer, d)
}

// Do implements workload.Worker: one transaction of the mix. A deadlock, a
// serialization failure or a lock timeout rolls it back and runs it again
// with the same inputs, up to maxAttempts times; the retries are counted.
func (k *vuser) Do(ctx context.Context) (workload.Result, error) {
	op := k.next
	if op < 0 {
		op = k.pick()
	}
	k.next, k.prev = -1, op
	var run func(context.Context) (int64, error)
	procs := k.w.run.procedures
	switch op {
	case OpNewOrder:
		in := k.p.newOrder(k.warehouse(), k.w.Warehouses)
		run = pick(procs, k.newOrderProc, k.newOrder, &in)
	case OpPayment:
		in := k.p.payment(k.warehouse(), k.w.Warehouses)
		run = pick(procs, k.paymentProc, k.payment, &in)
	case OpOrderStatus:
		in := k.p.orderStatus(k.warehouse())
		run = pick(procs, k.orderStatusProc, k.orderStatus, &in)
	case OpDelivery:
		in := k.p.delivery(k.warehouse())
		run = pick(procs, k.deliveryProc, k.delivery, &in)
	default:
		in := k.p.stockLevel(k.warehouse())
		if !k.w.run.allWarehouses {
			in.d = k.district
		}
		run = pick(procs, k.stockLevelProc, k.stockLevel, &in)
	}
	st := &k.w.run.stats
	for attempt := 1; ; attempt++ {
		rows, err := run(ctx)
		if err == nil {
			// Rows counts the rows each transaction read, inserted, updated
			// or deleted. Bytes stay 0: TPC-C's figure is NOPM, and the rows'
			// data sizes by SQL type are not summed per transaction.
			return workload.Result{Op: op, Rows: rows}, nil
		}
		if errors.Is(err, errUnusedItem) {
			st.noRollbacks.Add(1)
			return workload.Result{Op: op, Rows: rows}, nil
		}
		if attempt >= maxAttempts || ctx.Err() != nil || !retryable(k.t.Classify(err)) {
			return workload.Result{Op: op}, err
		}
		st.retries.Add(1)
	}
}

// pick binds a transaction's input to its server-side (procs) or
// client-side form.
func pick[In any](procs bool, server, client func(context.Context, *In) (int64, error), in *In) func(context.Context) (int64, error) {
	f := client
	if procs {
		f = server
	}
	return func(ctx context.Context) (int64, error) { return f(ctx, in) }
}

// retryable reports whether a transaction that failed with class c is run
// again: deadlocks and serialization failures (PostgreSQL 40P01/40001,
// MySQL 1213) and lock timeouts (MySQL 1205, SQLite BUSY after its busy
// timeout).
func retryable(c metrics.ErrClass) bool {
	return c == metrics.ErrSerialization || c == metrics.ErrLockTimeout
}

// Observation counter names (workload.Observer).
const (
	obsNewOrders     = "new_orders" // sum of d_next_o_id: committed New-Orders
	obsRetries       = "retries"    // transactions retried
	obsNORollbacks   = "new_order_rollbacks"
	obsCommits       = "client_commits"   // ceiling's COMMITs
	obsRollbacks     = "client_rollbacks" // ceiling's ROLLBACKs
	obsEmptyDelivery = "delivery_empty_districts"
)

// Observe implements workload.Observer: the committed New-Orders are
// counted from the database (the sum of D_NEXT_O_ID over the districts,
// which only a committed New-Order advances) like HammerDB's NOPM, plus
// the driver's own counters.
func (w *Workload) Observe(ctx context.Context, t target.Target) (map[string]float64, error) {
	conn, err := t.Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("tpcc: count new orders: %w", err)
	}
	defer conn.Close()
	d := t.Dialect()
	rows, err := conn.Query(ctx, "SELECT SUM(d_next_o_id) FROM "+d.Table(TDistrict))
	if err != nil {
		return nil, fmt.Errorf("tpcc: count new orders: %w", err)
	}
	defer rows.Close()
	var n int64
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("tpcc: count new orders: %w", err)
		}
		return nil, errors.New("tpcc: count new orders: no result")
	}
	if err := rows.Scan(&n); err != nil {
		return nil, fmt.Errorf("tpcc: count new orders: %w", err)
	}
	if err := rows.Close(); err != nil {
		return nil, fmt.Errorf("tpcc: count new orders: %w", err)
	}
	st := &w.run.stats
	return map[string]float64{
		obsNewOrders:     float64(n),
		obsRetries:       float64(st.retries.Load()),
		obsNORollbacks:   float64(st.noRollbacks.Load()),
		obsCommits:       float64(st.commits.Load()),
		obsRollbacks:     float64(st.rollbacks.Load()),
		obsEmptyDelivery: float64(st.emptyDelivery.Load()),
	}, nil
}

// Shard implements workload.Sharder: a shard runs on the prepared
// dataset like any run (Attach); its virtual users' numbers are global,
// so their home warehouses and districts spread over the shards as over
// one run's users. On MySQL with --procedures the shards install the
// procedures as they attach, one after another or at once.
func (w *Workload) Shard(_, _ int) error {
	w.sharded = true
	return nil
}

// DatabaseFigures implements workload.DatabaseFigurer: the figures counted
// from the database (every shard's new orders, the server's commits).
func (w *Workload) DatabaseFigures() []string {
	return []string{FigNOPM, FigNewOrders, FigTPM, FigEfficiency}
}

// Figure names (report.Result.Figures).
const (
	FigNOPM          = "nopm"           // committed New-Orders per minute, from the database
	FigNewOrders     = "new_orders"     // committed New-Orders in the measured phase
	FigTPM           = "tpm"            // the server's commits + rollbacks per minute (server-wide)
	FigClientTPM     = "client_tpm"     // ceiling's own commits + rollbacks per minute
	FigEfficiency    = "efficiency_pct" // NOPM / (12.86 × W), with keying and think times only
	FigRetries       = "retries"
	FigNORollbacks   = "new_order_rollbacks"
	FigEmptyDelivery = "delivery_empty_districts"
)

// Figures implements workload.Observer. TPM is the server's view: on
// PostgreSQL pg_stat_database's xact_commit + xact_rollback, on
// MySQL/MariaDB Com_commit + Com_rollback (every TPC-C transaction is an
// explicit BEGIN … COMMIT/ROLLBACK), as HammerDB reads them; both are
// server-wide (PostgreSQL: database-wide), so other sessions' work and
// ceiling's own sampling queries count too. SQLite has no server: TPM is
// absent there, and client_tpm (ceiling's own commits and rollbacks) is
// the figure to read.
func (w *Workload) Figures(s workload.Span) map[string]float64 {
	out := map[string]float64{}
	if s.Seconds <= 0 || s.Delta == nil {
		return out
	}
	perMin := 60 / s.Seconds
	if n, ok := s.Delta[obsNewOrders]; ok {
		out[FigNewOrders] = n
		out[FigNOPM] = n * perMin
		if w.run.keyingThinking && w.Warehouses > 0 {
			out[FigEfficiency] = n * perMin / (MaxTpmCPerWarehouse * float64(w.Warehouses)) * 100
		}
	}
	c, cok := s.Delta[obsCommits]
	r, rok := s.Delta[obsRollbacks]
	if cok && rok {
		out[FigClientTPM] = (c + r) * perMin
	}
	for _, k := range []struct{ obs, fig string }{{obsRetries, FigRetries}, {obsNORollbacks, FigNORollbacks}, {obsEmptyDelivery, FigEmptyDelivery}} {
		if v, ok := s.Delta[k.obs]; ok {
			out[k.fig] = v
		}
	}
	if tpm, ok := serverTPM(s.Server, s.Seconds); ok {
		out[FigTPM] = tpm
	}
	return out
}

// serverTPM computes the server's transactions per minute from its counter
// deltas, when it has them.
func serverTPM(c map[string]float64, seconds float64) (float64, bool) {
	if c == nil || seconds <= 0 {
		return 0, false
	}
	for _, pair := range [][2]string{{target.CtrCommits, target.CtrRollbacks}, {"mysql.com_commit", "mysql.com_rollback"}} {
		cm, ok1 := c[pair[0]]
		rb, ok2 := c[pair[1]]
		if ok1 && ok2 {
			return (cm + rb) * 60 / seconds, true
		}
	}
	return 0, false
}

var _ workload.Observer = (*Workload)(nil)

// loadConstants are the C constants the loader used (clause 2.1.6.1), as
// Attach (or Prepare) set them.
func (w *Workload) loadConstants() Constants { return w.consts }
