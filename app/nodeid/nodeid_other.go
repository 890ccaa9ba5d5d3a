//go:build !unix

package nodeid

import "os"

// Without flock a live holder cannot be told from a dead one, so sharing
// an identity would be unsafe: every process takes a fresh one and a
// restart waits for its old leases to expire.
func lockFile(*os.File) error { return errNoLocking }
