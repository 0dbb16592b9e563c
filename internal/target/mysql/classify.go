package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"

	"github.com/go-sql-driver/mysql"

	"github.com/ceiling-db/ceiling/internal/metrics"
)

// Server error numbers ceiling tells apart (MySQL and MariaDB share them
// unless noted).
var errNumClass = map[uint16]metrics.ErrClass{
	1213: metrics.ErrSerialization, // ER_LOCK_DEADLOCK
	1205: metrics.ErrLockTimeout,   // ER_LOCK_WAIT_TIMEOUT
	1062: metrics.ErrConstraint,    // ER_DUP_ENTRY
	1586: metrics.ErrConstraint,    // ER_DUP_ENTRY_WITH_KEY_NAME
	1452: metrics.ErrConstraint,    // ER_NO_REFERENCED_ROW_2
	1451: metrics.ErrConstraint,    // ER_ROW_IS_REFERENCED_2
	1216: metrics.ErrConstraint,    // ER_NO_REFERENCED_ROW
	1217: metrics.ErrConstraint,    // ER_ROW_IS_REFERENCED
	1048: metrics.ErrConstraint,    // ER_BAD_NULL_ERROR
	3819: metrics.ErrConstraint,    // ER_CHECK_CONSTRAINT_VIOLATED (MySQL 8)
	4025: metrics.ErrConstraint,    // ER_CONSTRAINT_FAILED (MariaDB CHECK)
	3024: metrics.ErrTimeout,       // ER_QUERY_TIMEOUT (MySQL max_execution_time)
	1969: metrics.ErrTimeout,       // ER_STATEMENT_TIMEOUT (MariaDB max_statement_time)
	1317: metrics.ErrTimeout,       // ER_QUERY_INTERRUPTED (KILL QUERY)
	1927: metrics.ErrConnLost,      // ER_CONNECTION_KILLED (MariaDB KILL)
	1053: metrics.ErrConnLost,      // ER_SERVER_SHUTDOWN
	2006: metrics.ErrConnLost,      // CR_SERVER_GONE_ERROR (client library)
	2013: metrics.ErrConnLost,      // CR_SERVER_LOST (client library)
	4031: metrics.ErrConnLost,      // ER_CLIENT_INTERACTION_TIMEOUT (MySQL 8 wait_timeout)
}

// Classify maps an error from this package (or from go-sql-driver) to an
// error class:
//
//   - 1213 deadlock → ErrSerialization; 1205 lock wait timeout →
//     ErrLockTimeout;
//   - 1062/1586 duplicate key, 1452/1451/1216/1217 foreign key, 1048 NOT
//     NULL, 3819/4025 CHECK → ErrConstraint;
//   - 3024/1969 statement time limit, 1317 interrupted, and a client-side
//     deadline → ErrTimeout;
//   - 1927 killed, 1053 shutdown, 2006/2013, driver.ErrBadConn,
//     mysql.ErrInvalidConn, sql.ErrConnDone, EOF and network errors →
//     ErrConnLost;
//   - anything else → ErrOther.
func Classify(err error) metrics.ErrClass {
	if err == nil {
		return metrics.ErrOther
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		if c, ok := errNumClass[me.Number]; ok {
			return c
		}
		return metrics.ErrOther
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return metrics.ErrTimeout
	case errors.Is(err, driver.ErrBadConn),
		errors.Is(err, mysql.ErrInvalidConn),
		errors.Is(err, sql.ErrConnDone),
		errors.Is(err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, net.ErrClosed):
		return metrics.ErrConnLost
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return metrics.ErrConnLost
	}
	return metrics.ErrOther
}
