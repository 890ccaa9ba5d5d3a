package build

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// guard keeps agent definition files in the workspace's .claude/agents
// only while a build that uses them runs: written when the first build
// using an agent starts, removed when the last one ends. Builds of one
// process share the files by count.
type guard struct {
	dir    string
	mu     sync.Mutex
	counts map[string]int
}

func newGuard(workspace string) *guard {
	return &guard{dir: filepath.Join(workspace, ".claude", "agents"), counts: map[string]int{}}
}

// acquire writes the agents' files (name to text) and counts them.
func (g *guard) acquire(agents map[string]string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := os.MkdirAll(g.dir, 0o755); err != nil {
		return fmt.Errorf("agent files: %w", err)
	}
	for name, text := range agents {
		if err := os.WriteFile(g.path(name), []byte(text), 0o644); err != nil {
			return fmt.Errorf("agent files: %w", err)
		}
		g.counts[name]++
	}
	return nil
}

// release uncounts the agents and removes the files no build uses.
func (g *guard) release(agents map[string]string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	var errs []error
	for name := range agents {
		g.counts[name]--
		if g.counts[name] > 0 {
			continue
		}
		delete(g.counts, name)
		errs = append(errs, removeFile(g.path(name)))
	}
	return errors.Join(errs...)
}

// sweep removes the files of agents no build of this process runs: those
// a crash left behind.
func (g *guard) sweep(names []string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	var errs []error
	for _, name := range names {
		if g.counts[name] == 0 {
			errs = append(errs, removeFile(g.path(name)))
		}
	}
	return errors.Join(errs...)
}

func (g *guard) path(name string) string { return filepath.Join(g.dir, name+".md") }

func removeFile(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("agent files: %w", err)
	}
	return nil
}
