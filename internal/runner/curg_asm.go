//go:build linux && (amd64 || arm64)

package runner

// curg identifies the calling goroutine: the address of the runtime's
// descriptor of the goroutine (its g), read from the thread's g slot as the
// runtime itself does (curg_amd64.s, curg_arm64.s), with no system call.
// A coroutine of iter.Pull runs on a goroutine of its own, so this tells
// a worker's coroutine from any other caller. The value is only compared,
// never dereferenced; a g is never moved or freed while its goroutine
// runs.
func curg() uintptr

// curgIsGoroutine: curg tells goroutines apart, not just threads.
const curgIsGoroutine = true
