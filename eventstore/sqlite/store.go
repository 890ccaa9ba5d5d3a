// Package sqlite is the embedded event store: the whole log and the
// consumers' checkpoints live in one SQLite file, driven through the pure Go
// modernc.org/sqlite driver (no cgo).
//
// # Ordering
//
// SQLite admits one writer at a time and every append runs in one IMMEDIATE
// transaction, so appends are serialized and the positions they take
// (INTEGER PRIMARY KEY AUTOINCREMENT) grow in commit order. Commit order
// therefore equals position order, and ReadAll(after, limit) is simply
// "position > after ORDER BY position": a reader's snapshot always holds a
// prefix of the log, so it can never skip an event that commits later. The
// PostgreSQL backend needs transaction ids for the same guarantee; this one
// does not.
//
// # Connections
//
// The store keeps two pools on the file. The write pool has exactly one
// connection whose transactions begin IMMEDIATE: concurrent appends queue in
// Go for that connection instead of spinning on SQLITE_BUSY. Other processes
// on the same file have their own write connection; they wait for the file
// lock through the busy timeout. The read pool has several query-only
// connections; in WAL mode readers never block the writer nor each other.
//
// # Change signals
//
// Changes is fed by an in-process Broadcaster notified after every commit,
// and by a poller that watches PRAGMA data_version on a dedicated read
// connection. data_version changes whenever another connection (in this
// process or another, such as `omega chat` beside `omega serve`) commits, so
// foreign commits wake followers within Options.PollInterval for the cost of
// one tiny query, without reading the events table.
//
// # Durability
//
// The file runs in WAL mode with synchronous=FULL: the WAL is fsynced before
// Append returns, so a power loss cannot drop an acknowledged event.
// synchronous=NORMAL would fsync only at checkpoints and could lose the last
// commits on power loss (never corrupt the file). On the development VM FULL
// costs about 1.3 ms per commit (~600 single appends/s against ~3,000 with
// NORMAL, see bench_test.go); a personal gateway appends a handful of events
// per message, so FULL stays.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/eventstore/streamcache"
	"github.com/omega-gateway/omega/migrations"
)

const (
	busyTimeout         = 10 * time.Second
	defaultPollInterval = 100 * time.Millisecond
)

// Options tunes Open.
type Options struct {
	// Logger receives migration and poller messages; nil means slog.Default().
	Logger *slog.Logger
	// SkipMigrate leaves the schema alone (for `omega migrate status` and
	// tests that manage the schema themselves).
	SkipMigrate bool
	// PollInterval is how often PRAGMA data_version is checked for commits
	// made through other connections; 0 means 100 ms.
	PollInterval time.Duration
	// Versions stamps each appended event with its type's current schema
	// version; nil leaves it unset (read as 1).
	Versions eventstore.SchemaVersions
}

// Store is the SQLite event store. It implements eventstore.Store and
// eventstore.Checkpoints and is safe for concurrent use.
type Store struct {
	path   string
	write  *sql.DB
	read   *sql.DB
	logger *slog.Logger
	bcast  eventstore.Broadcaster
	// unread signals changes the Tail has not been handed (Delivered):
	// other processes' appends and local ones it must read.
	unread   eventstore.Broadcaster
	versions eventstore.SchemaVersions

	stmtMu sync.Mutex
	stmts  *appendStmts

	stopPoll  context.CancelFunc
	pollDone  chan struct{}
	tail      *eventstore.Tail
	cache     *streamcache.Cache
	stopTail  context.CancelFunc
	tailDone  chan struct{}
	closeOnce sync.Once
	closeErr  error
}

var (
	_ eventstore.Store       = (*Store)(nil)
	_ eventstore.Checkpoints = (*Store)(nil)
)

// Open opens (creating if needed) the store at path and migrates it unless
// opts.SkipMigrate is set.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	return open(ctx, path, opts, "FULL")
}

// open takes the synchronous mode apart so that benchmarks can measure what
// FULL costs against NORMAL.
func open(ctx context.Context, path string, opts Options, synchronous string) (*Store, error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = defaultPollInterval
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("open sqlite store: create directory: %w", err)
	}
	s := &Store{path: abs, logger: logger, versions: opts.Versions}
	if err := s.openPools(ctx, synchronous); err != nil {
		return nil, err
	}
	if !opts.SkipMigrate {
		mopts := migrations.Options{LockFile: abs + ".migrate.lock", Logger: logger}
		if err := migrations.Up(ctx, s.write, migrations.SQLite, mopts); err != nil {
			return nil, errors.Join(fmt.Errorf("open sqlite store %s: %w", abs, err), s.closePools())
		}
	}
	if err := s.startPoller(ctx, opts.PollInterval); err != nil {
		return nil, errors.Join(err, s.closePools())
	}
	s.startTail()
	return s, nil
}

// startTail runs the shared reader of the end of the log (see
// eventstore.Follow).
func (s *Store) startTail() {
	s.tail = eventstore.NewTail(s.readAll, s.unread.Subscribe)
	s.cache = streamcache.New(0)
	s.tail.SetCache(s.cache)
	tctx, cancel := context.WithCancel(context.Background())
	s.stopTail, s.tailDone = cancel, make(chan struct{})
	go func() {
		defer close(s.tailDone)
		s.tail.Run(tctx)
	}()
}

// Tail is the store's shared reader of the end of the log.
func (s *Store) Tail() *eventstore.Tail { return s.tail }

// openPools opens the write pool first so that the file is created and
// switched to WAL by a single connection before readers attach.
func (s *Store) openPools(ctx context.Context, synchronous string) error {
	write, err := openDB(ctx, s.path, synchronous, false)
	if err != nil {
		return err
	}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)
	write.SetConnMaxIdleTime(0)

	read, err := openDB(ctx, s.path, synchronous, true)
	if err != nil {
		write.Close()
		return err
	}
	// One extra connection is held for good by the change poller.
	n := max(4, runtime.GOMAXPROCS(0)) + 1
	read.SetMaxOpenConns(n)
	read.SetMaxIdleConns(n)
	// Each connection keeps its own page cache: a reader left over from a
	// burst is closed once idle, and an idle process keeps only the ones
	// its polling uses (the pool hands out the most recently used first).
	read.SetConnMaxIdleTime(time.Minute)
	s.write, s.read = write, read
	return nil
}

func openDB(ctx context.Context, path, synchronous string, readOnly bool) (*sql.DB, error) {
	q := url.Values{}
	q.Set("_busy_timeout", fmt.Sprint(busyTimeout.Milliseconds()))
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", synchronous)
	q.Set("_foreign_keys", "1")
	if readOnly {
		// query_only rather than mode=ro: a read-only open of a WAL file
		// fails when the -shm file does not exist yet.
		q.Set("_query_only", "1")
	} else {
		q.Set("_txlock", "immediate")
	}
	dsn := (&url.URL{Scheme: "file", Path: path, RawQuery: q.Encode()}).String()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	return db, nil
}

// DB returns the write pool: its single connection is the only one through
// which this process writes, so a projection that commits its rows and its
// checkpoint in one transaction (see SaveCheckpointTx) queues behind appends
// instead of failing with SQLITE_BUSY. Transactions begin IMMEDIATE, hold
// the file's write lock and block every Append until they end: keep them
// short, and never call Append, SaveCheckpoint or DB() again while one is
// open, which would wait for the connection the transaction holds.
func (s *Store) DB() *sql.DB { return s.write }

// ReadDB returns the query-only pool for reads; it never waits for writers.
func (s *Store) ReadDB() *sql.DB { return s.read }

// Backend implements eventstore.Store.
func (s *Store) Backend() string { return "sqlite" }

// Changes implements eventstore.Store.
func (s *Store) Changes(ctx context.Context) <-chan struct{} { return s.bcast.Subscribe(ctx) }

// Close stops the poller and closes both pools. It is safe to call twice.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.stopTail()
		<-s.tailDone
		s.stopPoll()
		<-s.pollDone
		s.stmtMu.Lock()
		stmtErr := s.stmts.close()
		s.stmtMu.Unlock()
		s.closeErr = errors.Join(stmtErr, s.closePools())
	})
	return s.closeErr
}

func (s *Store) closePools() error {
	return errors.Join(s.read.Close(), s.write.Close())
}

// startPoller holds one read connection for PRAGMA data_version, whose
// value is per connection: it moves when any other connection commits.
func (s *Store) startPoller(ctx context.Context, every time.Duration) error {
	conn, err := s.read.Conn(ctx)
	if err != nil {
		return fmt.Errorf("open sqlite change poller: %w", err)
	}
	last, err := dataVersion(ctx, conn)
	if err != nil {
		conn.Close()
		return fmt.Errorf("open sqlite change poller: %w", err)
	}
	pctx, cancel := context.WithCancel(context.Background())
	s.stopPoll, s.pollDone = cancel, make(chan struct{})
	go func() {
		defer close(s.pollDone)
		defer conn.Close()
		s.poll(pctx, conn, last, every)
	}()
	return nil
}

func (s *Store) poll(ctx context.Context, conn *sql.Conn, last int64, every time.Duration) {
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		v, err := dataVersion(ctx, conn)
		if err != nil {
			if ctx.Err() == nil {
				s.logger.Warn("sqlite change poller", "path", s.path, "err", err)
			}
			continue
		}
		if v != last {
			last = v
			s.bcast.Notify()
			if !s.tailHoldsEnd(ctx, conn) {
				s.unread.Notify()
			}
		}
	}
}

// tailHoldsEnd reports whether the Tail has the last event of the log:
// then the commit data_version saw was this process's own (an append
// handed to the Tail, a read model) and the Tail need not read.
func (s *Store) tailHoldsEnd(ctx context.Context, conn *sql.Conn) bool {
	var end int64
	if err := conn.QueryRowContext(ctx, selectLast).Scan(&end); err != nil {
		return false
	}
	return s.tail != nil && s.tail.Holds(end)
}

func dataVersion(ctx context.Context, conn *sql.Conn) (int64, error) {
	var v int64
	if err := conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v); err != nil {
		return 0, fmt.Errorf("read data_version: %w", err)
	}
	return v, nil
}
