package claudemd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/catalog"
	"github.com/omega-gateway/omega/eventstore"
)

// FileName is the file Claude Code reads in its working directory.
const FileName = "CLAUDE.md"

// Maintainer keeps a workspace's CLAUDE.md in step with the log.
type Maintainer struct {
	Store    eventstore.Store
	Registry *domain.Registry
	// Dir is the workspace; Template the text deployed where no file is.
	Dir      string
	Template string
	// Head is the log's last position (the projection engine's Head):
	// the file is written from the log up to there, then each change to
	// the projects or skills after it rewrites it.
	Head   func(ctx context.Context) (int64, error)
	Logger *slog.Logger
}

// New checks a maintainer's collaborators.
func New(m Maintainer) (*Maintainer, error) {
	if m.Store == nil || m.Registry == nil || m.Dir == "" || m.Head == nil || m.Logger == nil {
		return nil, errors.New("claudemd: needs a store, registry, workspace, head and logger")
	}
	return &m, nil
}

// Path is the file kept.
func (m *Maintainer) Path() string { return filepath.Join(m.Dir, FileName) }

// Run writes the file, then rewrites it after every change to the
// projects or skills until ctx ends. A write that fails is logged and
// tried again at the next change or start: it never stops omega.
func (m *Maintainer) Run(ctx context.Context) error {
	head, err := m.Head(ctx)
	if err != nil {
		return fmt.Errorf("claudemd: the log's head: %w", err)
	}
	m.refresh(ctx)
	return eventstore.Follow(ctx, m.Store, head, eventstore.FollowOptions{Name: "CLAUDE.md", Logger: m.Logger, PollInterval: time.Minute},
		func(ctx context.Context, evs []domain.Event) (int64, error) {
			for _, e := range evs {
				if e.StreamID == catalog.ProjectsStream || e.StreamID == catalog.SkillsStream {
					m.refresh(ctx)
					break
				}
			}
			return evs[len(evs)-1].Position, nil
		})
}

// refresh writes the file and logs what went wrong, if anything.
func (m *Maintainer) refresh(ctx context.Context) {
	changed, err := m.Refresh(ctx)
	switch {
	case err != nil:
		m.Logger.Error("workspace CLAUDE.md not updated", "path", m.Path(), "err", err)
	case changed:
		m.Logger.Info("workspace CLAUDE.md updated", "path", m.Path())
	}
}

// Refresh writes the file from the log as it is now; false when it
// already said that.
func (m *Maintainer) Refresh(ctx context.Context) (bool, error) {
	var projects catalog.Projects
	if _, err := eventstore.Fold(ctx, m.Store, m.Registry, catalog.ProjectsStream, &projects); err != nil {
		return false, err
	}
	var skills catalog.SkillCatalog
	if _, err := eventstore.Fold(ctx, m.Store, m.Registry, catalog.SkillsStream, &skills); err != nil {
		return false, err
	}
	return m.write(Section(projects, skills))
}

// write merges section into the file and replaces it atomically. An
// edit the person saves meanwhile is not overwritten: the file is read
// again just before the rename, and the merge redone when it changed.
func (m *Maintainer) write(section string) (bool, error) {
	if err := os.MkdirAll(m.Dir, 0o700); err != nil {
		return false, err
	}
	for range 3 {
		current, err := readIfAny(m.Path())
		if err != nil {
			return false, err
		}
		next, err := Merge(current, m.Template, section)
		if err != nil {
			return false, err
		}
		if current != nil && bytes.Equal(current, next) {
			return false, nil
		}
		tmp, err := writeTemp(m.Dir, next)
		if err != nil {
			return false, err
		}
		again, err := readIfAny(m.Path())
		if err == nil && bytes.Equal(again, current) && (again == nil) == (current == nil) {
			if err := os.Rename(tmp, m.Path()); err != nil {
				_ = os.Remove(tmp)
				return false, fmt.Errorf("replace %s: %w", m.Path(), err)
			}
			return true, nil
		}
		_ = os.Remove(tmp)
		if err != nil {
			return false, err
		}
	}
	return false, fmt.Errorf("%s kept changing while it was being updated", m.Path())
}

// readIfAny reads a file; nil (and no error) when there is none.
func readIfAny(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

// writeTemp writes b to a new file beside the target (same file system,
// so the rename is atomic) and flushes it to disk.
func writeTemp(dir string, b []byte) (string, error) {
	f, err := os.CreateTemp(dir, "."+FileName+".*")
	if err != nil {
		return "", err
	}
	name := f.Name()
	_, werr := f.Write(b)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr, os.Chmod(name, 0o644)); err != nil {
		_ = os.Remove(name)
		return "", fmt.Errorf("write %s: %w", name, err)
	}
	return name, nil
}
