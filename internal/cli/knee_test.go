package cli

import "testing"

// TestOneWorkerNote: the note before a knee search comes for a server
// with the default single worker only.
func TestOneWorkerNote(t *testing.T) {
	for _, c := range []struct {
		threads int
		given   bool
		engine  string
		want    bool
	}{
		{1, false, "postgres", true},
		{1, false, "mysql", true},
		{1, true, "postgres", false}, // -c 1 given: the user's choice
		{8, true, "postgres", false},
		{1, false, "sqlite", false},
	} {
		if got := oneWorkerNote(c.threads, c.given, c.engine) != ""; got != c.want {
			t.Errorf("%d threads (given %v) on %s: note %v, want %v", c.threads, c.given, c.engine, got, c.want)
		}
	}
}
