package postgres

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/lib/pq"

	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/eventstore/streamcache"
	"github.com/omega-gateway/omega/migrations"
)

// Options tunes Open.
type Options struct {
	// MaxOpenConns caps the connection pool (default 32).
	MaxOpenConns int
	// Logger receives connection and listener events (default slog.Default()).
	Logger *slog.Logger
	// SkipMigrate leaves the schema alone (for `omega migrate` and tools
	// that must not change the database).
	SkipMigrate bool
	// Versions stamps each appended event with its type's current schema
	// version; nil leaves it unset (read as 1).
	Versions eventstore.SchemaVersions
	// MustExist makes Open refuse with ErrNoSchema, rather than create
	// the schema, a database omega has never used: for commands that read.
	MustExist bool
}

// ErrNoSchema: under Options.MustExist, the database has no omega schema.
var ErrNoSchema = errors.New("no omega schema in the database")

const (
	defaultMaxOpenConns = 32
	connectAttempts     = 4
	connectBackoff      = 250 * time.Millisecond
	connectTimeout      = 5 * time.Second
)

// Store is the PostgreSQL event store. It is safe for concurrent use.
type Store struct {
	db    *sql.DB
	log   *slog.Logger
	local eventstore.Broadcaster
	// unread signals changes the Tail has not been handed (Delivered):
	// other processes' appends and local ones it must read.
	unread   eventstore.Broadcaster
	commands eventstore.Broadcaster
	notifier *notifier
	listener *pq.Listener
	versions eventstore.SchemaVersions
	tail     *eventstore.Tail
	cache    *streamcache.Cache

	// Prepared once per connection: one round trip per call instead of
	// lib/pq's two for an unnamed statement (parse, then bind).
	appendStmt, readFirstStmt, readAfterStmt, readAwaitingStmt, readAfterSignalledStmt, readAwaitingSignalledStmt, loadStmt, versionStmt, advanceStmt, announceStmt *sql.Stmt

	watchers checkpointWatchers
	schema   string // where the log lives: checkpoint announcements name it

	stop      context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

var (
	_ eventstore.Store       = (*Store)(nil)
	_ eventstore.Checkpoints = (*Store)(nil)
)

// Open connects to the database at dsn, waits briefly for it to answer,
// applies pending migrations unless opts.SkipMigrate, and starts listening
// for appends made by other processes.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	logger = logger.With("component", "eventstore/postgres")
	maxOpen := opts.MaxOpenConns
	if maxOpen <= 0 {
		maxOpen = defaultMaxOpenConns
	}

	connector, err := pq.NewConnector(oneRoundTrip(dsn))
	if err != nil {
		// The parse error may quote the DSN, password included.
		return nil, fmt.Errorf("postgres: invalid DSN %s", Redact(dsn))
	}
	db := sql.OpenDB(connector)
	db.SetMaxOpenConns(maxOpen)
	// Keep every connection: the default of 2 idle connections makes
	// concurrent writers reconnect constantly.
	db.SetMaxIdleConns(maxOpen)
	db.SetConnMaxIdleTime(5 * time.Minute)

	if err := ping(ctx, db, logger, dsn); err != nil {
		db.Close()
		return nil, err
	}
	if opts.MustExist {
		var exists bool
		if err := db.QueryRowContext(ctx, `SELECT to_regclass('events') IS NOT NULL`).Scan(&exists); err != nil || !exists {
			db.Close()
			return nil, cmp.Or(err, ErrNoSchema)
		}
	}
	if !opts.SkipMigrate {
		if err := migrations.Up(ctx, db, migrations.Postgres, migrations.Options{Logger: logger}); err != nil {
			db.Close()
			return nil, fmt.Errorf("postgres %s: %w", Redact(dsn), err)
		}
	}

	s := &Store{db: db, log: logger, versions: opts.Versions}
	if err := db.QueryRowContext(ctx, "SELECT coalesce(current_schema(), '-')").Scan(&s.schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("postgres: read the current schema: %w", err)
	}
	s.schema = strings.ReplaceAll(s.schema, " ", "_") // one word of a payload
	if err := s.prepare(ctx); err != nil {
		db.Close()
		return nil, err
	}

	bg, stop := context.WithCancel(context.Background())
	s.stop = stop
	instance := uuid.NewString()
	s.notifier = newNotifier(db, logger, instance)
	s.listener = pq.NewListener(dsn, 100*time.Millisecond, 30*time.Second, s.listenerEvent)
	s.tail = eventstore.NewTail(s.tailRead, s.unread.Subscribe)
	s.tail.SetAwaitingRead(s.readAwaiting)
	s.cache = streamcache.New(0)
	s.tail.SetCache(s.cache)
	s.wg.Add(3)
	go func() {
		defer s.wg.Done()
		s.tail.Run(bg)
	}()
	go func() {
		defer s.wg.Done()
		s.notifier.run(bg)
	}()
	go func() {
		defer s.wg.Done()
		s.listen(bg, instance)
	}()
	return s, nil
}

// oneRoundTrip turns on lib/pq's binary_parameters unless the DSN sets
// it: a statement with parameters then costs one round trip (parse, bind
// and execute sent together) instead of two (parse, then bind and
// execute). It also sends []byte arguments in binary, which the text, json
// and bytea columns omega binds them to read as they are.
func oneRoundTrip(dsn string) string {
	if strings.Contains(dsn, "binary_parameters") {
		return dsn
	}
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		q := u.Query()
		q.Set("binary_parameters", "yes")
		u.RawQuery = q.Encode()
		return u.String()
	}
	return strings.TrimSpace(dsn) + " binary_parameters=yes"
}

// ping waits for the server with a short bounded retry, so that a
// database starting next to omega (docker compose) is not a fatal error.
func ping(ctx context.Context, db *sql.DB, logger *slog.Logger, dsn string) error {
	var err error
	wait := connectBackoff
	for attempt := 1; attempt <= connectAttempts; attempt++ {
		pctx, cancel := context.WithTimeout(ctx, connectTimeout)
		err = db.PingContext(pctx)
		cancel()
		if err == nil {
			return nil
		}
		if attempt == connectAttempts || ctx.Err() != nil {
			break
		}
		logger.Warn("postgres not reachable, retrying", "target", Redact(dsn), "attempt", attempt, "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		wait *= 2
	}
	return fmt.Errorf("postgres: cannot connect to %s: %w", describe(dsn), err)
}

// preparedSQL is where a prepared statement of the store goes, and its SQL.
type preparedSQL struct {
	dst   **sql.Stmt
	query string
}

// statements are the store's prepared statements and their SQL.
func (s *Store) statements() []preparedSQL {
	return []preparedSQL{
		{&s.appendStmt, appendSQL},
		{&s.readFirstStmt, readFirstSQL},
		{&s.readAfterStmt, readAfterSQL},
		{&s.readAwaitingStmt, readAwaitingSQL},
		{&s.readAfterSignalledStmt, readAfterSignalledSQL},
		{&s.readAwaitingSignalledStmt, readAwaitingSignalledSQL},
		{&s.loadStmt, loadSQL},
		{&s.versionStmt, versionSQL},
		{&s.advanceStmt, advanceCheckpointsSQL},
		{&s.announceStmt, "SELECT pg_notify($1, $2)"},
	}
}

func (s *Store) prepare(ctx context.Context) error {
	for _, st := range s.statements() {
		prepared, err := s.db.PrepareContext(ctx, st.query)
		if err != nil {
			s.closeStmts()
			return fmt.Errorf("postgres: prepare statements (is the schema migrated?): %w", err)
		}
		*st.dst = prepared
	}
	return nil
}

func (s *Store) closeStmts() {
	for _, st := range s.statements() {
		if *st.dst != nil {
			(*st.dst).Close()
		}
	}
}

// DB returns the store's connection pool, so projections can commit their
// writes and their checkpoint in one transaction.
func (s *Store) DB() *sql.DB { return s.db }

// ReadDB is the same pool: PostgreSQL readers never wait behind writers.
func (s *Store) ReadDB() *sql.DB { return s.db }

// Backend implements eventstore.Store.
func (s *Store) Backend() string { return "postgres" }

// Changes implements eventstore.Store.
func (s *Store) Changes(ctx context.Context) <-chan struct{} {
	return s.local.Subscribe(ctx)
}

// Tail is the store's shared reader of the end of the log (see
// eventstore.Follow).
func (s *Store) Tail() *eventstore.Tail { return s.tail }

// Close stops the listener and closes the pool. It is safe to call twice.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.stop()
		lerr := s.listener.Close()
		s.wg.Wait()
		s.notifier.flush()
		s.closeStmts()
		s.closeErr = errors.Join(lerr, s.db.Close())
	})
	return s.closeErr
}

// Redact returns dsn with its password removed, for logs and errors.
// Anything it cannot parse is hidden entirely.
func Redact(dsn string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "(unparseable postgres URL)"
		}
		q := u.Query()
		for k := range q {
			if strings.EqualFold(k, "password") {
				q.Set(k, "xxxxx")
			}
		}
		u.RawQuery = q.Encode()
		return u.Redacted()
	}
	return redactKeyValue(dsn)
}

// describe names the server a DSN points at, for connection errors.
func describe(dsn string) string {
	cfg, err := pq.NewConfig(dsn)
	if err != nil {
		return Redact(dsn)
	}
	host := cfg.Host
	if cfg.Hostaddr.IsValid() {
		host = cfg.Hostaddr.String()
	}
	return fmt.Sprintf("host %s port %d database %q as user %q", host, cfg.Port, cfg.Database, cfg.User)
}
