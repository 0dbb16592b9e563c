//go:build linux && !amd64 && !arm64

package runner

import "golang.org/x/sys/unix"

// curg identifies the caller by its OS thread where reading the goroutine
// needs assembly not written here: the coroutines of a group share their
// group's locked thread, and nothing else runs on it.
func curg() uintptr { return uintptr(unix.Gettid()) }

// curgIsGoroutine: curg tells threads apart, not goroutines.
const curgIsGoroutine = false
