package runner

import "golang.org/x/sys/windows"

// processCPU returns this process's user+system CPU seconds, or -1.
func processCPU() float64 {
	var created, exited, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(windows.CurrentProcess(), &created, &exited, &kernel, &user); err != nil {
		return -1
	}
	// Filetimes count 100 ns units.
	ticks := func(f windows.Filetime) int64 { return int64(f.HighDateTime)<<32 | int64(f.LowDateTime) }
	return float64(ticks(kernel)+ticks(user)) / 1e7
}
