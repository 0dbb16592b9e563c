//go:build !unix

package hostprof

// SameDevice cannot tell devices apart on this system: known is false.
func SameDevice(a, b string) (same, known bool) { return false, false }
