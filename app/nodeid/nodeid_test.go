//go:build unix

package nodeid

import (
	"os"
	"path/filepath"
	"testing"
)

// The identity survives a restart, is private to its owner, and two
// processes running at once on one data directory never share it.
func TestNodeIdentity(t *testing.T) {
	dir := t.TempDir()
	first, err := Claim(dir)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(filepath.Join(dir, "node-id"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("node-id mode %v, want 0600", info.Mode().Perm())
	}
	// A second holder (flock conflicts between open files, as between
	// processes) gets an identity of its own.
	second, err := Claim(dir)
	if err != nil {
		t.Fatal(err)
	}
	if second.ID == first.ID {
		t.Fatalf("two live holders share identity %s", first.ID)
	}
	id := first.ID
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	again, err := Claim(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = again.Release() }()
	defer func() { _ = second.Release() }()
	if again.ID != id {
		t.Fatalf("restart got identity %s, want %s", again.ID, id)
	}
}

// A torn or foreign identity file is replaced, not trusted.
func TestNodeIdentityRepairsGarbage(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "node-id"), []byte("not-a-uuid"), 0o600); err != nil {
		t.Fatal(err)
	}
	n, err := Claim(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = n.Release() }()
	b, err := os.ReadFile(filepath.Join(dir, "node-id"))
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != n.ID+"\n" {
		t.Fatalf("node-id holds %q, want %q", b, n.ID)
	}
}
