// Package projects imports project definitions into the event log and
// reads them back. A project is a folder under $OMEGA_DATA_DIR/projects
// holding a ROLE.md; the folder is an import, the log is the record: a
// new, changed or removed ROLE.md becomes an event on the projects
// stream, and a turn reads the role from the log, so a re-run of an old
// turn sees the role of its time.
package projects

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/catalog"
	"github.com/omega-gateway/omega/eventstore"
)

// RoleFile is the file that makes a folder a project.
const RoleFile = "ROLE.md"

// maxSyncAttempts bounds the read-decide-append cycle when other
// processes import at the same time.
const maxSyncAttempts = 5

// Catalog keeps the projects stream in line with the projects folder.
type Catalog struct {
	store eventstore.Store
	reg   *domain.Registry
	dir   string
	log   *slog.Logger
}

// New returns a catalog importing from dir; an empty dir imports nothing
// (a re-run reads the log as it was copied).
func New(store eventstore.Store, reg *domain.Registry, dir string, log *slog.Logger) (*Catalog, error) {
	if store == nil || reg == nil || log == nil {
		return nil, errors.New("projects: catalog needs a store, registry and logger")
	}
	return &Catalog{store: store, reg: reg, dir: dir, log: log}, nil
}

// Load folds the projects stream.
func (c *Catalog) Load(ctx context.Context) (catalog.Projects, error) {
	var p catalog.Projects
	if _, err := eventstore.Fold(ctx, c.store, c.reg, catalog.ProjectsStream, &p); err != nil {
		return catalog.Projects{}, fmt.Errorf("projects: %w", err)
	}
	return p, nil
}

// Sync imports what changed in the folder since the log last said, and
// returns the projects as the log now says. Unchanged files append
// nothing; the append names the version it read, so two processes never
// record one change twice. A folder that cannot be read leaves the log as
// it is (logged), rather than removing every project.
func (c *Catalog) Sync(ctx context.Context) (catalog.Projects, error) {
	for attempt := 1; ; attempt++ {
		state, err := c.Load(ctx)
		if err != nil || c.dir == "" {
			return state, err
		}
		found, err := scan(c.dir, c.log)
		if err != nil {
			c.log.Warn("projects: folder unreadable; keeping the recorded projects", "dir", c.dir, "err", err)
			return state, nil
		}
		changes := state.Reconcile(found)
		if len(changes) == 0 {
			return state, nil
		}
		evs, err := domain.NewEvents(domain.Metadata{CorrelationID: "projects-import", CausationID: c.dir}, changes...)
		if err != nil {
			return state, err
		}
		_, err = c.store.Append(ctx, catalog.ProjectsStream, eventstore.Exact(state.Version), evs...)
		if errors.Is(err, eventstore.ErrConcurrency) && attempt < maxSyncAttempts {
			continue // another process imported meanwhile: read again
		}
		if err != nil {
			return state, fmt.Errorf("projects: record %d change(s): %w", len(changes), err)
		}
		from := state.Version
		for i, p := range changes {
			state.Apply(p, from+1+int64(i), time.Time{})
		}
		c.log.Info("projects imported", "changes", len(changes), "projects", state.Names())
		return state, nil
	}
}

// scan reads each project folder's ROLE.md. A missing projects folder is
// no projects.
func scan(dir string, log *slog.Logger) (map[string]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	found := make(map[string]string, len(entries))
	for _, e := range entries {
		if !e.IsDir() || !catalog.ValidProjectName(e.Name()) {
			continue
		}
		role, err := readRole(filepath.Join(dir, e.Name(), RoleFile))
		if errors.Is(err, fs.ErrNotExist) {
			continue // a folder without ROLE.md is not a project
		}
		if err != nil {
			return nil, err
		}
		if len(role) > catalog.MaxProjectRole {
			log.Warn("projects: ROLE.md too long; the prompt gets its beginning", "project", e.Name(), "bytes", len(role), "limit", catalog.MaxProjectRole)
		}
		found[e.Name()] = role
	}
	return found, nil
}

func readRole(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, catalog.MaxProjectRole+1))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return string(b), nil
}
