//go:build !linux

package runner

import "time"

// preciseSleep falls back to time.Sleep where nanosleep is not wired up.
func preciseSleep(d time.Duration) { time.Sleep(d) }

// rawSleep is preciseSleep here.
func rawSleep(d time.Duration) { preciseSleep(d) }
