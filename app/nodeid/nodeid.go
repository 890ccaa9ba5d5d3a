// Package nodeid gives each omega process sharing a data directory its
// own lease owner id, the same one again after a restart.
package nodeid

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/uuid"
)

// maxNodeSlots bounds how many processes may share one data directory,
// each with its own identity.
const maxNodeSlots = 64

// Identity is this process's lease owner id, kept in the data
// directory so that a restarted process (even after kill -9) owns the
// leases it held and resumes its senders at once instead of waiting for
// them to expire.
//
// Several processes may share a data directory (tests, a PostgreSQL
// deployment on one host): each takes the first identity file
// (node-id, node-id-1, ...) whose lock no live process holds. The lock is
// an advisory file lock the kernel drops when the process dies, so the
// identity of a killed process is free again for its restart, while two
// processes running at once never share one.
type Identity struct {
	ID   string
	file *os.File
}

// Claim takes the first free identity slot in dir, creating
// its file (0600, a new random id) on first use.
func Claim(dir string) (*Identity, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("node identity: create %s: %w", dir, err)
	}
	for slot := 0; slot < maxNodeSlots; slot++ {
		name := "node-id"
		if slot > 0 {
			name = fmt.Sprintf("node-id-%d", slot)
		}
		n, err := claimSlot(filepath.Join(dir, name))
		switch {
		case errors.Is(err, errLocked):
			continue
		case errors.Is(err, errNoLocking):
			return &Identity{ID: uuid.NewString()}, nil
		}
		return n, err
	}
	return nil, fmt.Errorf("node identity: all %d identity files in %s are held by running processes", maxNodeSlots, dir)
}

var (
	errLocked    = errors.New("identity held by a running process")
	errNoLocking = errors.New("file locks not supported here")
)

func claimSlot(path string) (*Identity, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("node identity: open %s: %w", path, err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, err
	}
	id, err := readOrCreateID(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("node identity %s: %w", path, err)
	}
	return &Identity{ID: id, file: f}, nil
}

func readOrCreateID(f *os.File) (string, error) {
	b, err := io.ReadAll(io.LimitReader(f, 256))
	if err != nil {
		return "", err
	}
	if id, err := uuid.Parse(strings.TrimSpace(string(b))); err == nil {
		return id.String(), nil
	}
	// New, or torn by a crash during the first write: a fresh id only
	// means the old one's leases (if any) expire after one TTL.
	id := uuid.NewString()
	if err := f.Truncate(0); err != nil {
		return "", err
	}
	if _, err := f.WriteAt([]byte(id+"\n"), 0); err != nil {
		return "", err
	}
	if err := f.Sync(); err != nil {
		return "", err
	}
	return id, nil
}

// Release frees the identity for another process.
func (n *Identity) Release() error {
	if n == nil || n.file == nil {
		return nil
	}
	err := n.file.Close()
	n.file = nil
	return err
}
