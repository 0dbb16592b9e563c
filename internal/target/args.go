package target

import "time"

// NilPointer reports whether a is a nil pointer of one of the types a
// Conn's Exec and Query take by pointer (*int64, *bool, *float64, *string,
// *time.Time: the arguments rowdata.Row.Refs hands out, which stay valid
// as the row is refilled). Such an argument is sent as NULL, as
// database/sql does.
func NilPointer(a any) bool {
	switch v := a.(type) {
	case *int64:
		return v == nil
	case *bool:
		return v == nil
	case *float64:
		return v == nil
	case *string:
		return v == nil
	case *time.Time:
		return v == nil
	}
	return false
}
