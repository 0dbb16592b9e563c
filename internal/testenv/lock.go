package testenv

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ceiling-db/ceiling/internal/target"
)

// CheckNamespaceLock checks a server target's target.Exclusive: open
// returns a new target on one database each call (closed by the caller's
// cleanup or not at all: the first one is closed here). While the first
// holds the lock a second cannot take it, and the error names the holder
// by holderPrefix ("(backend pid ", "(connection "); once the first is
// closed, the second can.
func CheckNamespaceLock(t *testing.T, open func() target.Target, holderPrefix string) {
	t.Helper()
	ctx := context.Background()
	first := open()
	if err := first.(target.Exclusive).LockNamespace(ctx); err != nil {
		t.Fatalf("first lock: %v", err)
	}
	second := open()
	err := second.(target.Exclusive).LockNamespace(ctx)
	if !errors.Is(err, target.ErrNamespaceBusy) || !strings.Contains(err.Error(), holderPrefix) {
		t.Fatalf("second lock while the first holds it: %v; want ErrNamespaceBusy naming the holder %q…", err, holderPrefix)
	}
	if err := first.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := second.(target.Exclusive).LockNamespace(ctx); err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
}
