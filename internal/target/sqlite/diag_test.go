package sqlite

import (
	"context"
	"runtime"
	"testing"

	"github.com/ceiling-db/ceiling/internal/target"
)

func TestSampleDiagnosis(t *testing.T) {
	ctx := context.Background()
	tg := open(t, target.DurabilityFull)
	if err := tg.Schema().CreateTable(ctx, "d", "id INTEGER PRIMARY KEY, v TEXT"); err != nil {
		t.Fatal(err)
	}
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	before, _ := tg.Sample(ctx)
	for i := 0; i < 50; i++ {
		if _, err := c.Exec(ctx, "INSERT INTO ceiling_d (id, v) VALUES (?, 'x')", int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	after, _ := tg.Sample(ctx)
	logMs := after.Counters[target.CtrWaitLogMs] - before.Counters[target.CtrWaitLogMs]
	if logMs <= 0 {
		t.Errorf("wait_log_io_ms delta %v at synchronous=FULL, want > 0", logMs)
	}
	for _, k := range []string{target.CtrWaitDataReadMs, target.CtrWaitDataWriteMs, target.CtrWaitLockMs} {
		if _, ok := after.Counters[k]; !ok {
			t.Errorf("%s absent", k)
		}
	}
	for _, k := range []string{target.CtrServerCPUSec, target.CtrWaitCPUMs, target.CtrWaitClientMs, target.CtrWaitOtherMs, target.CtrWaitSamples} {
		if _, ok := after.Counters[k]; ok {
			t.Errorf("%s present: not measurable for an embedded engine", k)
		}
	}
	if runtime.GOOS == "linux" {
		for _, k := range []string{target.CtrHostCPUBusy, target.CtrHostCPUTotal, target.CtrHostCores} {
			if _, ok := after.Counters[k]; !ok {
				t.Errorf("%s absent", k)
			}
		}
		if after.Counters[target.CtrHostCPUTotal] <= after.Counters[target.CtrHostCPUBusy] {
			t.Errorf("host total %v <= busy %v", after.Counters[target.CtrHostCPUTotal], after.Counters[target.CtrHostCPUBusy])
		}
	}
	t.Logf("50 inserts: wait_log_io_ms %+.2f, data read %+.2f, data write %+.2f, lock %+.2f", logMs,
		after.Counters[target.CtrWaitDataReadMs]-before.Counters[target.CtrWaitDataReadMs],
		after.Counters[target.CtrWaitDataWriteMs]-before.Counters[target.CtrWaitDataWriteMs],
		after.Counters[target.CtrWaitLockMs]-before.Counters[target.CtrWaitLockMs])
}
