package target

import (
	"runtime"
	"testing"
)

// TestDataOnLogDevice: a directory is on the device found for itself; an
// unknown device or directory tells nothing; another device is not it.
func TestDataOnLogDevice(t *testing.T) {
	dir := t.TempDir()
	d := FindLogDevice(dir)
	if d == nil {
		if runtime.GOOS == "linux" {
			t.Logf("no block device found for %s (a tmpfs or overlay): only the nil cases are checked", dir)
		}
	} else {
		if got := DataOnLogDevice(dir, d); got == nil || !*got {
			t.Errorf("%s on its own device %s: %v", dir, d.Name, got)
		}
		other := *d
		other.Minor++
		if got := DataOnLogDevice(dir, &other); got == nil || *got {
			t.Errorf("%s on another device: %v", dir, got)
		}
	}
	if got := DataOnLogDevice(dir, nil); got != nil {
		t.Errorf("no log device: %v", *got)
	}
	if got := DataOnLogDevice("", &LogDevice{Name: "vda"}); got != nil {
		t.Errorf("no data directory: %v", *got)
	}
}
