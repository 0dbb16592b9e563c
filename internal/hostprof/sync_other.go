//go:build !linux

package hostprof

import "os"

const syncCall = "fsync"

func datasync(f *os.File) error { return f.Sync() }
