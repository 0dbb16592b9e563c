package vfs

import (
	"context"
	"path/filepath"
	"testing"

	sqlitevfs "github.com/ncruces/go-sqlite3/vfs"
)

// BenchmarkInsert compares small autocommit inserts through the plain "os"
// VFS and through "ceiling". synchronous=off keeps fsync out of the loop so
// the wrapper's own cost is not drowned; normal is the realistic WAL setting.
func BenchmarkInsert(b *testing.B) {
	Register()
	for _, sync := range []string{"off", "normal"} {
		for _, vfsName := range []string{"os", Name} {
			b.Run("sync="+sync+"/vfs="+vfsName, func(b *testing.B) {
				ctx := context.Background()
				path := filepath.Join(b.TempDir(), "bench.db")
				b.Cleanup(func() { Forget(path) })
				db := openDB(b, dsn(path, vfsName, "busy_timeout(10000)", "journal_mode(wal)", "synchronous("+sync+")"))
				db.SetMaxOpenConns(1)
				if _, err := db.ExecContext(ctx, `CREATE TABLE t(id INTEGER PRIMARY KEY, tag TEXT, v TEXT)`); err != nil {
					b.Fatal(err)
				}
				stmt, err := db.PrepareContext(ctx, `INSERT INTO t(tag, v) VALUES ('bench', 'a small payload of about fifty bytes, more or less')`)
				if err != nil {
					b.Fatal(err)
				}
				defer stmt.Close()
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					if _, err := stmt.ExecContext(ctx); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				if vfsName == Name {
					var writes int64
					for _, s := range Stats(path) {
						writes += s.Writes
					}
					b.ReportMetric(float64(writes)/float64(b.N), "writes/op")
				}
			})
		}
	}
}

// BenchmarkWriteAt isolates the wrapper: one 4 KiB WriteAt on a temporary
// OS file, bare and metered.
func BenchmarkWriteAt(b *testing.B) {
	base := sqlitevfs.Find("os")
	flags := sqlitevfs.OPEN_READWRITE | sqlitevfs.OPEN_CREATE | sqlitevfs.OPEN_DELETEONCLOSE | sqlitevfs.OPEN_TEMP_DB
	for _, tt := range []struct {
		name string
		vfs  sqlitevfs.VFS
	}{
		{"os", base},
		{Name, newVFS(base)},
	} {
		b.Run("vfs="+tt.name, func(b *testing.B) {
			f, _, err := tt.vfs.Open("", flags)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			buf := make([]byte, 4096)
			b.SetBytes(int64(len(buf)))
			b.ResetTimer()
			for b.Loop() {
				if _, err := f.WriteAt(buf, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
