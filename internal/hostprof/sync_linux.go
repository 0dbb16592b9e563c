package hostprof

import (
	"os"
	"syscall"
)

const syncCall = "fdatasync"

func datasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return err
		}
	}
}
