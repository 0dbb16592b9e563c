//go:build !unix

package sqlite

import "os"

// tryLock takes no lock where flock does not exist (Windows): two ceilings
// on one database file are not kept apart there.
func tryLock(*os.File, bool) (busy bool, err error) { return false, nil }
