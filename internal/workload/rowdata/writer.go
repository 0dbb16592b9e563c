package rowdata

import (
	"context"
	"math/rand/v2"

	"github.com/ceiling-db/ceiling/internal/target"
)

// Writer inserts and deletes single rows of a row table for one worker,
// keeping the table's live set current. Its row and the arguments that
// point into it are reused from request to request.
type Writer struct {
	row  Row
	args []any // row.Refs, built by the first Insert
	of   *Row  // the row args point into (a copied Writer rebuilds them)

	// Delete's argument: a pointer to delID, boxed once (an int64 passed
	// as an argument would be boxed, an allocation, at every request).
	delID   int64
	delArgs []any
}

// Insert inserts a fresh row with the table's next id through insertSQL
// (InsertSQL) and adds it to live. It returns the rows inserted and their
// data bytes.
func (w *Writer) Insert(ctx context.Context, conn target.Conn, rng *rand.Rand, live *LiveSet, insertSQL string) (rows, bytes int64, err error) {
	id := live.NextID()
	Fill(&w.row, rng, id)
	if w.of != &w.row {
		w.args, w.of = w.row.Refs(w.args[:0]), &w.row
	}
	n, err := conn.Exec(ctx, insertSQL, w.args...)
	if err != nil {
		return 0, 0, err
	}
	size := w.row.Bytes()
	live.Add(id, size)
	return n, n * size, nil
}

// Delete deletes row id (of size bytes, taken from live by the caller)
// through deleteSQL. On error the row may still be there, so it goes back
// into live, eligible for a later delete.
func (w *Writer) Delete(ctx context.Context, conn target.Conn, live *LiveSet, deleteSQL string, id, size int64) (rows, bytes int64, err error) {
	if len(w.delArgs) != 1 || w.delArgs[0] != any(&w.delID) {
		w.delArgs = []any{&w.delID} // first use, or a copied Writer
	}
	w.delID = id
	n, err := conn.Exec(ctx, deleteSQL, w.delArgs...)
	if err != nil {
		live.Add(id, size)
		return 0, 0, err
	}
	return n, n * size, nil
}
