package osstat

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Lines as /proc/diskstats gives them: a 6.x kernel (20 columns, flushes
// last), a 4.x kernel (14 columns, no discard or flush fields) and a
// partition.
const diskstatsFixture = `   7       0 loop0 46 0 2098 13 0 0 0 0 0 28 13 0 0 0 0 0 0
 254       0 vda 34149 5983 1504866 14169 69135 19029 3195048 14566 0 12368 33614 10577 113 1240064 1578 25443 3325
 259       1 nvme0n1p1 120 3 9000 40 5000 10 80000 2500 1 3000 2540
`

func TestParseDiskStats(t *testing.T) {
	d, err := ParseDiskStats(diskstatsFixture, 254, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := Disk{Name: "vda", Reads: 34149, ReadBytes: 512 * 1504866, ReadMs: 14169, Writes: 69135, WriteMs: 14566, IOTicksMs: 12368,
		Flushes: 25443, FlushMs: 3325, HasFlush: true}
	if d != want {
		t.Fatalf("vda: got %+v, want %+v", d, want)
	}
	d, err = ParseDiskStats(diskstatsFixture, 259, 1)
	if err != nil || d.Name != "nvme0n1p1" || d.Writes != 5000 || d.WriteMs != 2500 || d.IOTicksMs != 3000 || d.HasFlush || d.Flushes != 0 {
		t.Fatalf("old kernel's line: %+v, %v; want no flush figures", d, err)
	}
	// Major and minor must both match: 259:0 is not listed, 7:0 is loop0.
	if _, err := ParseDiskStats(diskstatsFixture, 259, 0); err == nil {
		t.Fatal("259:0 found, want an error")
	}
	if d, err := ParseDiskStats(diskstatsFixture, 7, 0); err != nil || d.Name != "loop0" {
		t.Fatalf("7:0: %+v %v", d, err)
	}
	if _, err := ParseDiskStats(" 254 0 vda 1 2 x 4 5 6 7 8 9 10 11\n", 254, 0); err == nil {
		t.Fatal("bad number: want an error")
	}
}

// TestDiskOfTempDir: on Linux, the test's temporary directory is on a
// block device (unless it is a memory file system), whose counters move
// when a file there is written and synced; a memory file system is on no
// listed device.
func TestDiskOfTempDir(t *testing.T) {
	if runtime.GOOS != "linux" {
		if _, ok := DiskOf(t.TempDir()); ok {
			t.Fatal("a device found outside Linux")
		}
		return
	}
	if _, ok := DiskOf("/dev/shm"); ok {
		t.Fatal("/dev/shm (tmpfs) is on a listed block device")
	}
	dir := t.TempDir()
	dev, ok := DiskOf(dir)
	if !ok {
		t.Skipf("%s is on no block device /proc/diskstats lists (a memory or overlay file system): nothing to read", dir)
	}
	if dev.Name == "" || dev.Path != dir {
		t.Fatalf("DiskOf(%s) = %+v", dir, dev)
	}
	// A directory that does not exist yet is found through its parent.
	if d, ok := DiskOf(filepath.Join(dir, "not", "yet")); !ok || d.Name != dev.Name || d.Path != dir {
		t.Fatalf("missing subdirectory: %+v %v, want %s via %s", d, ok, dev.Name, dir)
	}
	before, ok := ReadDisk(dev)
	if !ok {
		t.Fatalf("ReadDisk(%+v) failed", dev)
	}
	f, err := os.Create(filepath.Join(dir, "x"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for range 8 {
		if _, err := f.Write(make([]byte, 4096)); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	after, _ := ReadDisk(dev)
	if after.Writes <= before.Writes {
		t.Fatalf("%s: writes %d before 8 synced writes, %d after", dev.Name, before.Writes, after.Writes)
	}
	t.Logf("%s: +%d writes, +%d flushes (flush counters: %v)", dev.Name, after.Writes-before.Writes, after.Flushes-before.Flushes, after.HasFlush)
}
