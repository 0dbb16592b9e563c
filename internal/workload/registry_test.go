package workload

import (
	"strings"
	"testing"
)

// TestLookupSuggests: an unknown workload's error lists them all and, for
// a name one or two letters off or a prefix, says which was meant.
func TestLookupSuggests(t *testing.T) {
	r := Registry{{Name: "inserts-deletes"}, {Name: "single-inserts"}, {Name: "tpcc"}, {Name: "updates"}, {Name: "direct-selects"}, {Name: "indirect-selects"}}
	for name, want := range map[string]string{
		"inserts-delete":   `unknown workload "inserts-delete" (did you mean inserts-deletes? available: direct-selects, indirect-selects, inserts-deletes, single-inserts, tpcc, updates)`,
		"indirect-selcts":  "did you mean indirect-selects? ",
		"irect-selects":    "did you mean direct-selects? ",
		"selects":          "did you mean direct-selects or indirect-selects? ",
		"inserts":          "did you mean inserts-deletes or single-inserts? ",
		"Single-Insert":    "did you mean single-inserts?",
		"tpc":              "did you mean tpcc?",
		"upd":              "did you mean updates?",
		"nope":             `unknown workload "nope" (available: direct-selects, indirect-selects, inserts-deletes, single-inserts, tpcc, updates)`,
		"no-such-workload": `(available: `,
	} {
		_, err := r.Lookup(name)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
		if name == "nope" && strings.Contains(err.Error(), "did you mean") {
			t.Errorf("%s: %v guesses", name, err)
		}
	}
	if _, err := r.Lookup("tpcc"); err != nil {
		t.Errorf("tpcc: %v", err)
	}
}

type fakeReader struct {
	Workload
	reads, reusing bool
}

func (f fakeReader) ReadsOnly() bool { return f.reads }
func (f fakeReader) Reusing() bool   { return f.reusing }

// TestReadOnlyError: on a server that takes no writes only a workload that
// reads tables prepared before runs; the others are told what to do.
func TestReadOnlyError(t *testing.T) {
	const why = "a hot standby"
	for name, tc := range map[string]struct {
		w    Workload
		want string
	}{
		"writer":          {fakeReader{}, "w changes rows, and db takes no writes (a hot standby): run it on the primary"},
		"not a Reader":    {nil, "w changes rows"},
		"reader, no load": {fakeReader{reads: true}, "db takes no writes (a hot standby), so the tables of w cannot be loaded there: prepare them on the primary (`ceiling prepare w --db PRIMARY`), then add --reuse here"},
		"reader, reusing": {fakeReader{reads: true, reusing: true}, ""},
	} {
		err := ReadOnlyError(tc.w, "w", "db", why)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want none", name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
		if err := ReadOnlyError(tc.w, "w", "db", ""); err != nil {
			t.Errorf("%s on a server that takes writes: %v", name, err)
		}
	}
}
