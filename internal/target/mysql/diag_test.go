package mysql

import (
	"strings"
	"testing"
	"time"

	"github.com/ceiling-db/ceiling/internal/target"
)

func TestNoteWaitEvidence(t *testing.T) {
	s := map[string]string{"performance_schema": "OFF", "missing_evidence": "Innodb_os_log_fsyncs (x)"}
	noteWaitEvidence(s, nil)
	if s["missing_evidence"] != "Innodb_os_log_fsyncs (x), wait categories (performance_schema is off)" {
		t.Errorf("off: %q", s["missing_evidence"])
	}
	s = map[string]string{"performance_schema": "ON"}
	noteWaitEvidence(s, &psWaits{})
	if !strings.Contains(s["missing_evidence"], "log-IO waits") {
		t.Errorf("on, redo log not instrumented: %q", s["missing_evidence"])
	}
	s = map[string]string{"performance_schema": "ON"}
	noteWaitEvidence(s, &psWaits{logInstrumented: true})
	if _, ok := s["missing_evidence"]; ok {
		t.Errorf("on, everything instrumented: %q", s["missing_evidence"])
	}
}

func TestLocal(t *testing.T) {
	for dsn, want := range map[string]bool{
		"mysql://root@127.0.0.1:3306/test":                  true,
		"mysql://root@localhost/test":                       true,
		"mysql://root@[::1]:3306/test":                      true,
		"mysql://root@/test?socket=/run/mysqld/mysqld.sock": true,
		"mysql://root@db.example.com:3306/test":             false,
		"mysql://root@10.1.2.3/test":                        false,
	} {
		if got := (&myTarget{dsn: dsn}).local(); got != want {
			t.Errorf("%s: got %v", dsn, got)
		}
	}
}

// TestDiagnosisCounters checks that a local server's sample has the CPU
// counters and no wait counters, and that Info says why.
func TestDiagnosisCounters(t *testing.T) {
	dsn := testDSN(t)
	ctx := testCtx(t)
	tg := openTarget(t, dsn, target.DurabilityServer)
	s := tg.(target.Sampler)
	if err := tg.Schema().CreateTable(ctx, "diag", "id INT PRIMARY KEY, v VARCHAR(10)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tg.Schema().DropTable(testCtx(t), "diag") })
	c := connect(t, tg)
	s0, err := s.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for i := 0; time.Since(start) < 500*time.Millisecond; i++ {
		if _, err := c.Exec(ctx, "INSERT INTO ceiling_diag (id, v) VALUES (?, ?)", i, "x"); err != nil {
			t.Fatal(err)
		}
	}
	s1, err := s.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{target.CtrWaitLogMs, target.CtrWaitDataReadMs, target.CtrWaitDataWriteMs,
		target.CtrWaitLockMs, target.CtrWaitCPUMs, target.CtrWaitClientMs, target.CtrWaitOtherMs, target.CtrWaitSamples} {
		if _, ok := s1.Counters[k]; ok {
			t.Errorf("%s present", k)
		}
	}
	info := tg.Info()
	if !strings.Contains(info.Settings["missing_evidence"], "performance_schema") {
		t.Errorf("missing_evidence = %q (performance_schema = %q)", info.Settings["missing_evidence"], info.Settings["performance_schema"])
	}
	for _, k := range []string{target.CtrServerCPUSec, target.CtrHostCPUBusy, target.CtrHostCPUTotal, target.CtrHostCores} {
		if _, ok := s1.Counters[k]; !ok {
			t.Fatalf("%s absent for a local server", k)
		}
	}
	d := s1.Counters[target.CtrServerCPUSec] - s0.Counters[target.CtrServerCPUSec]
	t.Logf("server_cpu_s %+.2f, host busy %+.2f of %+.2f, cores %v; missing_evidence %q", d,
		s1.Counters[target.CtrHostCPUBusy]-s0.Counters[target.CtrHostCPUBusy],
		s1.Counters[target.CtrHostCPUTotal]-s0.Counters[target.CtrHostCPUTotal],
		s1.Counters[target.CtrHostCores], info.Settings["missing_evidence"])
	if d <= 0 {
		t.Errorf("server CPU delta %v, want > 0", d)
	}
	// The server's threads' waits for a core, where its pid file named
	// the process (findServerPID): some wake-up latency over the inserts.
	if tg.(*myTarget).serverPID > 0 {
		rq, ok := s1.Counters[target.CtrServerRunQueueSec]
		rq -= s0.Counters[target.CtrServerRunQueueSec]
		t.Logf("server_runqueue_s %+.4f", rq)
		if !ok || rq <= 0 {
			t.Errorf("server run-queue delta %v s (present %v): want > 0", rq, ok)
		}
	}
}
