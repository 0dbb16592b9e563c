//go:build !linux

package hostprof

// InMemory cannot tell a memory file system here: it reports false.
func InMemory(dir string) (name string, ok bool) { return "", false }
