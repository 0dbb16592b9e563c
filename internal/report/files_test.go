package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ceiling-db/ceiling/internal/target"
)

// TestFileNotMeasured: a file whose syncs and write times the target
// cannot measure (MySQL's InnoDB files) has them null in JSON, n/a in
// the summary, and keeps that through a result read back; its data
// latency counts its reads only. A file that has them (SQLite's) keeps
// numbers, zeros included.
func TestFileNotMeasured(t *testing.T) {
	inno := fileOf(target.FileStat{Name: "test/ceiling_rows.ibd", Role: "data", Reads: 100, Writes: 50, BytesWritten: 50 << 14,
		ReadNs: 25e6, WriteNs: 1e6, NoSyncs: true, NoWriteTime: true}, 1, 1000)
	lite := fileOf(target.FileStat{Name: "ceiling.db", Role: "data", Reads: 100, Writes: 50, ReadNs: 25e6, WriteNs: 10e6}, 1, 1000)
	if inno.AvgWriteMs != nil || inno.SyncsPerTxn != nil || inno.AvgReadMs == nil || *inno.AvgReadMs != 0.25 {
		t.Errorf("InnoDB file: avg write %v, syncs/tx %v, avg read %v; want nil, nil, 0.25", inno.AvgWriteMs, inno.SyncsPerTxn, inno.AvgReadMs)
	}
	if n, ms := inno.TimedIO(); n != 100 || ms != 25 {
		t.Errorf("InnoDB file: timed IO %d in %.1f ms, want its 100 reads in 25 ms", n, ms)
	}
	if n, ms := lite.TimedIO(); n != 150 || ms != 35 {
		t.Errorf("SQLite file: timed IO %d in %.1f ms, want 150 in 35 ms", n, ms)
	}
	b, err := json.Marshal([]File{inno, lite})
	if err != nil {
		t.Fatal(err)
	}
	var raw []map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"syncs", "sync_ms", "write_ms"} {
		if v, ok := raw[0][k]; !ok || v != nil {
			t.Errorf("InnoDB file: %s = %v, want null", k, v)
		}
		if v, ok := raw[1][k].(float64); !ok || (k == "write_ms" && v != 10) {
			t.Errorf("SQLite file: %s = %v, want a number", k, raw[1][k])
		}
	}
	var back []File
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !back[0].NoSyncs || !back[0].NoWriteTime || back[1].NoSyncs || back[1].NoWriteTime || back[1].WriteMs != 10 || back[0].Reads != 100 {
		t.Errorf("read back: %+v", back)
	}
	var out bytes.Buffer
	PrintSummary(&out, &Result{Files: back, Summary: Summary{Requests: 1000}})
	if s := out.String(); !strings.Contains(s, "n/a: syncs (the server's file statistics count them with the files' other calls); write ms (the writes are asynchronous") {
		t.Errorf("summary without the files' n/a note:\n%s", s)
	}
}
