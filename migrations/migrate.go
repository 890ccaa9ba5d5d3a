// Package migrations holds the SQL schema of both backends, embedded in the
// binary, and applies it at start-up and through `omega migrate`.
package migrations

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"syscall"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/database"
	"github.com/pressly/goose/v3/lock"
)

//go:embed postgres/*.sql sqlite/*.sql
var files embed.FS

// Dialect names a backend's SQL flavour.
type Dialect string

const (
	Postgres Dialect = "postgres"
	SQLite   Dialect = "sqlite"
)

// ErrSchemaTooNew means the database was migrated by a newer omega.
var ErrSchemaTooNew = errors.New("database schema is newer than this binary")

const versionTable = "omega_schema_migrations"

// Options tunes Up.
type Options struct {
	// LockFile serializes SQLite migrations across processes; PostgreSQL
	// uses a session advisory lock instead.
	LockFile string
	Logger   *slog.Logger
}

// Up applies every pending migration. It is safe to call from several
// processes at once and refuses to run against a schema newer than the
// newest migration this binary embeds.
func Up(ctx context.Context, db *sql.DB, d Dialect, opts Options) error {
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	if d == SQLite && opts.LockFile != "" {
		unlock, err := lockFile(opts.LockFile)
		if err != nil {
			return err
		}
		defer unlock()
	}
	p, err := provider(db, d)
	if err != nil {
		return err
	}
	current, err := p.GetDBVersion(ctx)
	if err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	latest := Latest(p)
	if current > latest {
		return fmt.Errorf("%w: the database is at schema version %d, this omega knows up to %d; upgrade omega", ErrSchemaTooNew, current, latest)
	}
	if current == latest {
		// Nothing to apply: no lock to take (a process joining a running
		// cluster starts at once).
		return nil
	}
	results, err := p.Up(ctx)
	if err != nil {
		return fmt.Errorf("migrate %s schema: %w", d, err)
	}
	// One line when the schema moved, none when it was current: every
	// command opens the store, and only a change is news.
	for _, r := range results {
		logger.Debug("applied migration", "dialect", d, "version", r.Source.Version, "file", r.Source.Path, "took", r.Duration)
	}
	if len(results) > 0 {
		logger.Info("database schema migrated", "dialect", d, "from", current, "to", results[len(results)-1].Source.Version, "migrations", len(results))
	}
	return nil
}

// Status returns the database's schema version and the newest known one.
func Status(ctx context.Context, db *sql.DB, d Dialect) (current, latest int64, err error) {
	p, err := provider(db, d)
	if err != nil {
		return 0, 0, err
	}
	current, err = p.GetDBVersion(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("read schema version: %w", err)
	}
	return current, Latest(p), nil
}

// Newest is the newest migration version this binary embeds for d, read
// without a database (a migration's file name starts with its version).
func Newest(d Dialect) int64 {
	entries, _ := fs.ReadDir(files, string(d))
	var newest int64
	for _, e := range entries {
		var v int64
		if _, err := fmt.Sscanf(e.Name(), "%d_", &v); err == nil {
			newest = max(newest, v)
		}
	}
	return newest
}

// Latest returns the newest migration version a provider knows.
func Latest(p *goose.Provider) int64 {
	var latest int64
	for _, s := range p.ListSources() {
		latest = max(latest, s.Version)
	}
	return latest
}

func provider(db *sql.DB, d Dialect) (*goose.Provider, error) {
	sub, err := fs.Sub(files, string(d))
	if err != nil {
		return nil, fmt.Errorf("migrations for %s: %w", d, err)
	}
	opts := []goose.ProviderOption{goose.WithDisableGlobalRegistry(true)}
	var dialect database.Dialect
	switch d {
	case Postgres:
		dialect = database.DialectPostgres
		opts = append(opts, goose.WithSessionLocker(waitingLocker{id: lock.DefaultLockID}))
	case SQLite:
		dialect = database.DialectSQLite3
	default:
		return nil, fmt.Errorf("unknown dialect %q", d)
	}
	store, err := database.NewStore(dialect, versionTable)
	if err != nil {
		return nil, fmt.Errorf("migration store: %w", err)
	}
	opts = append(opts, goose.WithStore(store))
	p, err := goose.NewProvider("", db, sub, opts...)
	if err != nil {
		return nil, fmt.Errorf("load %s migrations: %w", d, err)
	}
	return p, nil
}

// lockFile takes an exclusive advisory lock on path, waiting for other
// processes that hold it.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open migration lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
