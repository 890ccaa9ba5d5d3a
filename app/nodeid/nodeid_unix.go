//go:build unix

package nodeid

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

func lockFile(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errLocked
	}
	if err != nil {
		return fmt.Errorf("node identity: lock %s: %w", f.Name(), err)
	}
	return nil
}
