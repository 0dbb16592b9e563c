//go:build unix

package hostprof

import (
	"os"
	"syscall"
)

// SameDevice says whether paths a and b (symbolic links followed) are on
// the same device (file system); known is false when either cannot be
// examined.
func SameDevice(a, b string) (same, known bool) {
	da, ok := device(a)
	if !ok {
		return false, false
	}
	db, ok := device(b)
	if !ok {
		return false, false
	}
	return da == db, true
}

func device(path string) (uint64, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Dev), true //nolint:unconvert // int32 on some systems
}
