package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"path"
	"strings"

	"github.com/ceiling-db/ceiling/internal/target"
)

// InnoDB's files as performance_schema sees them: file_summary_by_instance
// counts each open file's reads and writes, their bytes and their time.
// Over a MariaDB 10.11 run of mixed requests (64 MB buffer pool, 300,000
// rows) its reads of ceiling's table and the system tablespace matched
// Innodb_data_reads' change to within 1%, and its writes
// Innodb_data_writes'. Two things it cannot give: syncs, which it counts
// together with opens, closes and other calls (COUNT_MISC), and the time
// of InnoDB's page writes, which are asynchronous: it times their
// submission (0.014 ms a write there, where the device took 0.1-0.4 ms).
// The reads are synchronous, their time the session's wait for the disk.

// psFileEvents are the instruments of InnoDB's files, by the role they
// play in ceiling's results.
var psFileEvents = map[string]string{
	"wait/io/file/innodb/innodb_data_file": "data",
	"wait/io/file/innodb/innodb_log_file":  "log", // MySQL 8; MariaDB 10.11 has no redo log instrument
	"wait/io/file/innodb/innodb_temp_file": "other",
}

// psFiles reads the files of ceiling's own tables (in the DSN's database)
// and InnoDB's shared ones (the system tablespace, undo, temporary, redo)
// from file_summary_by_instance; other tables' files are left out.
type psFiles struct {
	datadir string // the server's datadir, ending in "/"
	db      string // the DSN's database
}

// probePSFiles returns a psFiles when performance_schema times InnoDB's
// data files, or nil and what is missing.
func probePSFiles(ctx context.Context, c *sql.Conn, settings map[string]string, db string) (*psFiles, string, error) {
	if !psOn(settings) {
		return nil, "per-file IO (performance_schema is off)", nil
	}
	var n int
	err := c.QueryRowContext(ctx, `SELECT COUNT(*) FROM performance_schema.setup_instruments
		WHERE NAME = 'wait/io/file/innodb/innodb_data_file' AND ENABLED = 'YES' AND TIMED = 'YES'`).Scan(&n)
	if err != nil {
		return nil, "", fmt.Errorf("mysql: read performance_schema.setup_instruments: %w", err)
	}
	if n == 0 {
		return nil, "per-file IO (performance_schema does not time wait/io/file/innodb/innodb_data_file)", nil
	}
	dir := settings["datadir"]
	if dir != "" && !strings.HasSuffix(dir, "/") {
		dir += "/"
	}
	return &psFiles{datadir: dir, db: db}, "", nil
}

// name is a file's name in results (relative to the datadir) and whether
// it is one ceiling reports: its own tables' or InnoDB's shared files.
func (p *psFiles) name(file string) (string, bool) {
	rel := strings.TrimPrefix(file, "./")
	if p.datadir != "" && strings.HasPrefix(file, p.datadir) {
		rel = strings.TrimPrefix(file, p.datadir)
	} else if path.IsAbs(file) {
		// Outside the datadir: InnoDB's shared files in
		// innodb_data_home_dir or innodb_undo_directory, or another
		// table's (DATA DIRECTORY), which is left out.
		base := path.Base(file)
		return base, sharedFile(base)
	}
	dir, base := path.Split(rel)
	switch strings.TrimSuffix(dir, "/") {
	case "", "#innodb_redo", "#innodb_temp":
		return rel, true
	case p.db:
		return rel, strings.HasPrefix(base, Prefix)
	}
	return rel, false
}

// sharedFile says whether base names one of InnoDB's shared files: the
// system tablespace, undo, temporary and redo files.
func sharedFile(base string) bool {
	for _, p := range []string{"ibdata", "undo", "ibtmp", "ib_logfile", "#ib_redo"} {
		if strings.HasPrefix(base, p) {
			return true
		}
	}
	return false
}

// read returns the files' cumulative statistics.
func (p *psFiles) read(ctx context.Context, c *sql.Conn) ([]target.FileStat, error) {
	rows, err := c.QueryContext(ctx, `SELECT FILE_NAME, EVENT_NAME, COUNT_READ, COUNT_WRITE,
		SUM_NUMBER_OF_BYTES_READ, SUM_NUMBER_OF_BYTES_WRITE, SUM_TIMER_READ, SUM_TIMER_WRITE
		FROM performance_schema.file_summary_by_instance WHERE EVENT_NAME LIKE 'wait/io/file/innodb/%'`)
	if err != nil {
		return nil, fmt.Errorf("mysql: read performance_schema.file_summary_by_instance: %w", err)
	}
	defer rows.Close()
	var out []target.FileStat
	for rows.Next() {
		var file, event string
		var reads, writes, bread, bwrite int64
		var tread, twrite uint64 // picoseconds
		if err := rows.Scan(&file, &event, &reads, &writes, &bread, &bwrite, &tread, &twrite); err != nil {
			return nil, fmt.Errorf("mysql: read performance_schema.file_summary_by_instance: %w", err)
		}
		role, ok := psFileEvents[event]
		if !ok {
			continue
		}
		name, ok := p.name(file)
		if !ok {
			continue
		}
		if path.Base(name) == "ibtmp1" || strings.HasPrefix(name, "#innodb_temp/") {
			role = "other" // temporary tables' tablespace, an instrument of its own on MySQL 8 only
		}
		out = append(out, target.FileStat{Name: name, Role: role, Reads: reads, Writes: writes,
			BytesRead: bread, BytesWritten: bwrite, ReadNs: int64(tread / 1000), WriteNs: int64(twrite / 1000),
			NoSyncs: true, NoWriteTime: role != "log"})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("mysql: read performance_schema.file_summary_by_instance: %w", err)
	}
	return out, nil
}
