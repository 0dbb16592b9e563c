package metrics

// ErrClass is the class an error is counted under (DESIGN.md section 4).
// Targets translate their driver's errors into these classes; the runner
// counts them and keeps the first message of each class.
type ErrClass uint8

// The error classes, in the order they are reported.
const (
	ErrOther         ErrClass = iota // anything not classified below
	ErrSerialization                 // deadlock or serialization failure: retry the transaction
	ErrLockTimeout                   // lock wait timeout, SQLite BUSY after the busy timeout
	ErrConstraint                    // unique, foreign key, not-null or check violation
	ErrConnLost                      // the connection was lost: reconnect and go on
	ErrTimeout                       // statement timeout or query cancelled by the server
	// ErrRecoveryConflict: a query on a hot standby cancelled because
	// the primary's changes being replayed conflicted with it
	// (PostgreSQL); the primary's work, not this load, causes it.
	ErrRecoveryConflict
	NumErrClasses // number of classes; not a class
)

var errClassNames = [NumErrClasses]string{
	ErrOther:            "other",
	ErrSerialization:    "serialization",
	ErrLockTimeout:      "lock_timeout",
	ErrConstraint:       "constraint",
	ErrConnLost:         "connection_lost",
	ErrTimeout:          "statement_timeout",
	ErrRecoveryConflict: "recovery_conflict",
}

// String returns the class name used in results and on the console.
func (c ErrClass) String() string {
	if c < NumErrClasses {
		return errClassNames[c]
	}
	return "unknown"
}

// ErrClasses lists every class in report order.
func ErrClasses() []ErrClass {
	out := make([]ErrClass, NumErrClasses)
	for i := range out {
		out[i] = ErrClass(i)
	}
	return out
}
