package target

import (
	"testing"
	"time"
)

func TestNilPointer(t *testing.T) {
	var i *int64
	var s *string
	x, str := int64(1), "a"
	for _, tc := range []struct {
		a    any
		want bool
	}{{i, true}, {s, true}, {(*time.Time)(nil), true}, {(*bool)(nil), true}, {(*float64)(nil), true},
		{&x, false}, {&str, false}, {nil, false}, {int64(0), false}, {(*int32)(nil), false}} {
		if got := NilPointer(tc.a); got != tc.want {
			t.Errorf("NilPointer(%T %v) = %v, want %v", tc.a, tc.a, got, tc.want)
		}
	}
}
