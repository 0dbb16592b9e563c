package rowdata

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/ceiling-db/ceiling/internal/target"
)

// argConn is a target.Conn that records the id its Exec is given (as the
// *int64 Writer.Delete passes) and fails when told to.
type argConn struct {
	target.Conn
	got  int64
	fail bool
}

func (c *argConn) Exec(_ context.Context, _ string, args ...any) (int64, error) {
	if len(args) != 1 {
		return 0, errors.New("want one argument")
	}
	p, ok := args[0].(*int64)
	if !ok {
		return 0, errors.New("argument is not an *int64")
	}
	c.got = *p
	if c.fail {
		return 0, errors.New("failed")
	}
	return 1, nil
}

// TestWriterDelete: Delete passes each id it is given, reports the row and
// its bytes, puts the row back into the live set when the statement fails,
// does not allocate, and a copied Writer does not write into the
// original's argument.
func TestWriterDelete(t *testing.T) {
	ctx := context.Background()
	live := NewLiveSet(0)
	c := &argConn{}
	var w Writer
	for _, id := range []int64{7, 1 << 40, 3} {
		n, b, err := w.Delete(ctx, c, live, "delete", id, 400)
		if err != nil || n != 1 || b != 400 || c.got != id {
			t.Fatalf("Delete(%d) = %d rows, %d bytes, %v; Exec saw id %d", id, n, b, err, c.got)
		}
	}
	if a := testing.AllocsPerRun(100, func() { _, _, _ = w.Delete(ctx, c, live, "delete", 9, 400) }); a != 0 {
		t.Errorf("Delete: %.1f allocations per call, want 0", a)
	}
	c.fail = true
	if _, _, err := w.Delete(ctx, c, live, "delete", 11, 300); err == nil {
		t.Fatal("Delete hid the statement's error")
	}
	if id, size, ok := live.Take(rand.New(rand.NewPCG(1, 1))); !ok || id != 11 || size != 300 {
		t.Fatalf("after a failed delete the live set holds %d (%d bytes, %v), want row 11 back", id, size, ok)
	}
	c.fail = false
	w2 := w
	if _, _, err := w2.Delete(ctx, c, live, "delete", 12, 400); err != nil || c.got != 12 || w.delID == 12 {
		t.Fatalf("copied Writer: Exec saw %d, original's id %d, %v", c.got, w.delID, err)
	}
}
