package target

import (
	"strconv"
	"time"
)

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

// AppendInteger appends v in decimal when it is one of the integer types
// the bulk paths take (int, int8 to int64, uint32, uint64) and reports
// whether it was.
func AppendInteger(b []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case int:
		return strconv.AppendInt(b, int64(x), 10), true
	case int8:
		return strconv.AppendInt(b, int64(x), 10), true
	case int16:
		return strconv.AppendInt(b, int64(x), 10), true
	case int32:
		return strconv.AppendInt(b, int64(x), 10), true
	case int64:
		return strconv.AppendInt(b, x, 10), true
	case uint32:
		return strconv.AppendUint(b, uint64(x), 10), true
	case uint64:
		return strconv.AppendUint(b, x, 10), true
	}
	return b, false
}

// textEscapes maps the bytes AppendTextEscaped escapes to the letter that
// follows the backslash.
var textEscapes = [256]byte{'\\': '\\', '\t': 't', '\n': 'n', '\r': 'r', 0: '0'}

// AppendTextEscaped appends s with the backslash escapes shared by
// PostgreSQL's COPY text format and MySQL's LOAD DATA: backslash, tab,
// newline and carriage return, and NUL as \0 (which only MySQL reads;
// nul reports one). Runs without such bytes are copied whole.
func AppendTextEscaped(b []byte, s string) (out []byte, nul bool) {
	start := 0
	for i := 0; i < len(s); i++ {
		e := textEscapes[s[i]]
		if e == 0 {
			continue
		}
		nul = nul || s[i] == 0
		b = append(b, s[start:i]...)
		b = append(b, '\\', e)
		start = i + 1
	}
	return append(b, s[start:]...), nul
}
