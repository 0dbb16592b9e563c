package target

import (
	"math"
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

func TestAppendInteger(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
		ok   bool
	}{
		{int(-1), "-1", true}, {int8(-128), "-128", true}, {int16(32767), "32767", true},
		{int32(-5), "-5", true}, {int64(math.MinInt64), "-9223372036854775808", true},
		{uint32(7), "7", true}, {uint64(math.MaxUint64), "18446744073709551615", true},
		{1.5, "", false}, {"1", "", false}, {nil, "", false},
	} {
		got, ok := AppendInteger([]byte("x"), c.v)
		if ok != c.ok || string(got) != "x"+c.want {
			t.Errorf("%T %v: %q, %v; want %q, %v", c.v, c.v, got, ok, "x"+c.want, c.ok)
		}
	}
}

func TestAppendTextEscaped(t *testing.T) {
	for _, c := range []struct {
		in, want string
		nul      bool
	}{
		{"", "", false},
		{"plain text", "plain text", false},
		{"\\", `\\`, false},
		{"a\tb\nc\rd\\e", `a\tb\nc\rd\\e`, false},
		{"\t\t", `\t\t`, false},
		{"x\x00y", `x\0y`, true},
		{"été\n", "été\\n", false},
	} {
		got, nul := AppendTextEscaped([]byte(">"), c.in)
		if string(got) != ">"+c.want || nul != c.nul {
			t.Errorf("%q: %q, %v; want %q, %v", c.in, got, nul, ">"+c.want, c.nul)
		}
	}
}
