// Package engine keeps omega's read models up to date from the event log.
// Each projection applies events in a transaction that also advances its
// checkpoint, so every event has exactly one effect even across crashes;
// every projection can be dropped and rebuilt from position 0 (Rebuild)
// or rebuilt beside the live tables and compared (Verify). On PostgreSQL
// one process applies each read model, under its advisory lock
// (ApplyExclusively).
package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/internal/wait"
	"github.com/omega-gateway/omega/projections/engine/pglock"
	"github.com/omega-gateway/omega/projections/readmodel"
)

// Engine keeps projections up to date and rebuilds them.
type Engine struct {
	db          *sql.DB
	store       Log
	dialect     readmodel.Dialect
	registry    *domain.Registry
	projections []readmodel.Projection
	logger      *slog.Logger
	// BatchSize is the most events applied in one transaction.
	BatchSize int
	// SkipBad makes rebuilds skip events of unknown type (each is logged)
	// instead of stopping at the first one. (An undecodable payload is
	// always skipped and recorded as poisoned.)
	SkipBad bool

	applied eventstore.Broadcaster
	stmts   *readmodel.Statements

	// exclusiveTTL, when set, makes Run apply only the projections whose
	// advisory locks the engine holds (ApplyExclusively).
	exclusiveTTL time.Duration

	mu      sync.Mutex
	through map[string]int64           // projection name -> checkpoint last committed (here or, announced, elsewhere)
	held    map[string]*pglock.Session // projections this engine applies, each on the session holding its lock (nil: the pool)
	waiters int                        // followers here awaiting the read models (Await)
	wake    func()                     // wakes the log's reader when a wait begins (OnAwait)
}

// Applied signals after every batch the running engine commits, so
// readers waiting for a read model to catch up need not poll blindly.
func (e *Engine) Applied(ctx context.Context) <-chan struct{} { return e.applied.Subscribe(ctx) }

// AppliedThrough returns the checkpoint the running engine last committed
// for the named projection, or, for one another process applies
// (ApplyExclusively), the last checkpoint that process announced; false
// before either is known. The checkpoint may have moved further since.
func (e *Engine) AppliedThrough(name string) (int64, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	pos, ok := e.through[name]
	return pos, ok
}

func (e *Engine) committed(ps []readmodel.Projection, pos int64) {
	e.mu.Lock()
	for _, p := range ps {
		e.through[p.Name()] = pos
	}
	e.mu.Unlock()
	e.applied.Notify()
}

// Log is the event store with the checkpoints it keeps beside the read
// models; the backend owns the checkpoint SQL.
type Log interface {
	eventstore.Store
	eventstore.Checkpoints
	eventstore.TxCheckpoints
}

// New returns an engine over db, which must be the database the store
// keeps its log in (checkpoints live beside the read models).
func New(db *sql.DB, store Log, d readmodel.Dialect, reg *domain.Registry, logger *slog.Logger, ps ...readmodel.Projection) *Engine {
	return &Engine{db: db, store: store, dialect: d, registry: reg, projections: ps, logger: logger, BatchSize: 1000, stmts: readmodel.NewStatements(db, d),
		through: map[string]int64{}, held: map[string]*pglock.Session{}}
}

// Projections returns the registered projections.
func (e *Engine) Projections() []readmodel.Projection { return e.projections }

// Select returns the named projections, or all of them for no names.
func (e *Engine) Select(which ...string) ([]readmodel.Projection, error) {
	if len(which) == 0 {
		return e.projections, nil
	}
	var out []readmodel.Projection
	for _, n := range which {
		p := e.find(n)
		if p == nil {
			return nil, fmt.Errorf("unknown projection %q (known: %v)", n, names(e.projections))
		}
		out = append(out, p)
	}
	return out, nil
}

func (e *Engine) find(name string) readmodel.Projection {
	for _, p := range e.projections {
		if p.Name() == name {
			return p
		}
	}
	return nil
}

// Versioned is implemented by projections whose tables have changed shape
// since their first version; the default version is 1.
type Versioned interface {
	Version() int
}

func schemaVersion(p readmodel.Projection) int64 {
	if v, ok := p.(Versioned); ok {
		return int64(v.Version())
	}
	return 1
}

func schemaName(p readmodel.Projection) string { return "schema:" + p.Name() }

// Setup creates the tables of every projection that does not have them.
// A projection whose recorded schema version differs from its code's (or
// was never recorded) is dropped and recreated with its checkpoint reset:
// read models are disposable, and following the log refills it.
//
// When every projection's tables are already those of this code (its
// version and the fingerprint of its DDL are recorded), Setup only reads
// that record: the database-wide schema lock and the DDL would make a
// process joining a running cluster wait behind every other setup.
func (e *Engine) Setup(ctx context.Context) error {
	if e.schemaCurrent(ctx) {
		return nil
	}
	for _, p := range e.projections {
		err := e.inTx(ctx, func(tx *sql.Tx) error {
			if err := e.lockSchema(ctx, tx); err != nil {
				return err
			}
			recorded, err := e.store.CheckpointTx(ctx, tx, schemaName(p))
			if err != nil {
				return err
			}
			if want := schemaVersion(p); recorded != want {
				if recorded != 0 {
					e.logger.Warn("projection schema changed; rebuilding it from the log", "projection", p.Name(), "from", recorded, "to", want)
				}
				if err := readmodel.DropTables(ctx, tx, p, ""); err != nil {
					return err
				}
				if err := e.store.SaveCheckpointTx(ctx, tx, readmodel.CheckpointName(p), 0); err != nil {
					return err
				}
				if err := e.store.SaveCheckpointTx(ctx, tx, schemaName(p), want); err != nil {
					return err
				}
			}
			if err := readmodel.CreateTables(ctx, tx, e.dialect, p, ""); err != nil {
				return err
			}
			return e.store.SaveCheckpointTx(ctx, tx, readmodel.FingerprintName(p), readmodel.SchemaFingerprint(e.dialect, p))
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Run follows the log for every projection until ctx ends, each lane
// (readmodel.Lanes) beside the others. In a lane, projections at the same
// checkpoint (normally all) follow together: one read of the log and one
// transaction per batch. A group whose apply fails is retried with
// backoff, the failure logged with the event's position and type; the
// others go on. Groups are formed again when a checkpoint moves under them
// (a rebuild, another process) and, while there are several, every few
// seconds so that one that caught up merges back. Under ApplyExclusively
// it applies only the projections whose locks it holds.
func (e *Engine) Run(ctx context.Context) error {
	lanes := readmodel.Lanes(e.dialect, e.projections)
	if e.exclusiveTTL > 0 {
		e.watchCheckpoints(ctx)
		return eachLane(ctx, lanes, e.runExclusive)
	}
	e.setHeld(nil, e.projections, e.projections)
	defer e.setHeld(nil, e.projections, nil)
	return eachLane(ctx, lanes, e.runGroups)
}

// eachLane runs run for every lane at once until ctx ends.
func eachLane(ctx context.Context, lanes [][]readmodel.Projection, run func(context.Context, []readmodel.Projection) error) error {
	var wg sync.WaitGroup
	for _, ps := range lanes {
		wg.Go(func() { _ = run(ctx, ps) })
	}
	wg.Wait()
	return ctx.Err()
}

// runGroups is Run over ps.
func (e *Engine) runGroups(ctx context.Context, ps []readmodel.Projection) error {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		groups, err := e.groups(ctx, ps)
		if err != nil && ctx.Err() != nil {
			break
		}
		if err != nil {
			e.logger.Error("projections: read checkpoints; retrying", "err", err, "retry_in", backoff)
			if wait.Sleep(ctx, backoff) != nil {
				break
			}
			backoff = min(backoff*2, 30*time.Second)
			continue
		}
		backoff = 100 * time.Millisecond
		gctx, cancel := context.WithCancel(ctx)
		regroup := make(chan struct{}, 1)
		var wg sync.WaitGroup
		for pos, ps := range groups {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if e.followGroup(gctx, ps, pos) {
					select {
					case regroup <- struct{}{}:
					default:
					}
				}
			}()
		}
		var merge <-chan time.Time
		if len(groups) > 1 {
			merge = time.After(5 * time.Second)
		}
		select {
		case <-ctx.Done():
		case <-regroup:
		case <-merge:
		}
		cancel()
		wg.Wait()
	}
	return ctx.Err()
}

// groups sorts ps by checkpoint.
func (e *Engine) groups(ctx context.Context, ps []readmodel.Projection) (map[int64][]readmodel.Projection, error) {
	out := map[int64][]readmodel.Projection{}
	for _, p := range ps {
		pos, err := e.store.Checkpoint(ctx, readmodel.CheckpointName(p))
		if err != nil {
			return nil, err
		}
		out[pos] = append(out[pos], p)
	}
	return out, nil
}

// followGroup applies the log to ps from pos until ctx ends; it returns
// true when the group must be formed again because a checkpoint moved.
func (e *Engine) followGroup(ctx context.Context, ps []readmodel.Projection, pos int64) bool {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := eventstore.Follow(ctx, e.store, pos, eventstore.FollowOptions{BatchSize: e.BatchSize, Name: "projections", Logger: e.logger},
			func(ctx context.Context, evs []domain.Event) (int64, error) {
				next, err := e.applyIsolating(ctx, ps, "", pos, evs)
				if next != pos {
					pos = next
					e.committed(ps, pos)
				}
				if err != nil {
					return 0, err
				}
				backoff = 100 * time.Millisecond
				return next, nil
			})
		if ctx.Err() != nil {
			return false
		}
		var moved *movedError
		if errors.As(err, &moved) {
			e.logger.Info("projection checkpoint moved by another writer; continuing from it", "projections", names(ps), "position", moved.actual)
			return true
		}
		e.logger.Error("projections stalled; retrying", "projections", names(ps), "err", err, "retry_in", backoff)
		if wait.Sleep(ctx, backoff) != nil {
			return false
		}
		backoff = min(backoff*2, 30*time.Second)
	}
	return false
}

// movedError reports that a checkpoint is not where the applier expected:
// another process (or a rebuild) advanced or reset it.
type movedError struct{ actual int64 }

func (m *movedError) Error() string { return fmt.Sprintf("checkpoint moved to %d", m.actual) }

// applyBatch applies evs to every projection in one transaction and moves
// their checkpoints from expected to the last event's position. Locking
// the checkpoint rows makes concurrent appliers (two processes, a rebuild
// beside a server) apply each event exactly once.
func (e *Engine) applyBatch(ctx context.Context, ps []readmodel.Projection, prefix string, expected int64, evs []domain.Event) (int64, error) {
	apply := e.applyAll
	if e.SkipBad {
		apply = e.applySkipping
	}
	return e.applyTx(ctx, ps, prefix, expected, evs[len(evs)-1].Position, func(ctx context.Context, tx *readmodel.Tx) error {
		return apply(ctx, tx, ps, evs)
	})
}

// applyTx runs apply in a transaction that moves the checkpoints of ps
// from expected to last.
func (e *Engine) applyTx(ctx context.Context, ps []readmodel.Projection, prefix string, expected, last int64, apply func(context.Context, *readmodel.Tx) error) (int64, error) {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = prefix + readmodel.CheckpointName(p)
	}
	// The usual case costs one statement for the checkpoints: all of them
	// move from where this engine left them.
	err := e.inTx(ctx, func(sqlTx *sql.Tx) error {
		moved, err := e.store.AdvanceCheckpointsTx(ctx, sqlTx, names, expected, last)
		if err != nil {
			return err
		}
		if !moved {
			return errNotAdvanced
		}
		if err := apply(ctx, readmodel.NewTx(sqlTx, e.dialect, e.registry, prefix, e.stmts)); err != nil {
			return err
		}
		return e.announce(ctx, sqlTx, ps, prefix, last)
	})
	if errors.Is(err, errNotAdvanced) {
		// A checkpoint is missing (a new projection) or another applier
		// moved it: create and lock them, and see.
		err = e.inTx(ctx, func(sqlTx *sql.Tx) error {
			positions, err := e.store.LockCheckpointsTx(ctx, sqlTx, names)
			if err != nil {
				return err
			}
			for _, actual := range positions {
				if actual != expected {
					return &movedError{actual: actual}
				}
			}
			if err := apply(ctx, readmodel.NewTx(sqlTx, e.dialect, e.registry, prefix, e.stmts)); err != nil {
				return err
			}
			if err := e.store.MoveCheckpointsTx(ctx, sqlTx, names, last); err != nil {
				return err
			}
			return e.announce(ctx, sqlTx, ps, prefix, last)
		})
	}
	if err != nil {
		return 0, err
	}
	return last, nil
}

// announce tells the other processes, when tx commits, that the live
// read models ps moved to last (only under ApplyExclusively: elsewhere
// every process applies every read model).
func (e *Engine) announce(ctx context.Context, tx *sql.Tx, ps []readmodel.Projection, prefix string, last int64) error {
	if e.exclusiveTTL == 0 || prefix != "" {
		return nil
	}
	return e.store.(announcer).AnnounceCheckpointsTx(ctx, tx, names(ps), last)
}

// errNotAdvanced sends applyTx to its slower path.
var errNotAdvanced = errors.New("checkpoints not where expected")

// batchApplier is implemented by projections that apply a batch faster
// than event by event (fewer statements), with the same result.
type batchApplier interface {
	ApplyBatch(ctx context.Context, tx *readmodel.Tx, evs []domain.Event) error
}

// applyAll applies evs to every projection, stopping at the first event of
// unknown type or that a projection cannot apply. Projections that can are
// handed the whole batch: a replay then costs a few statements per batch
// instead of one or two round trips per event.
func (e *Engine) applyAll(ctx context.Context, tx *readmodel.Tx, ps []readmodel.Projection, evs []domain.Event) error {
	for _, ev := range evs {
		if !e.registry.Known(ev.Type) {
			return fmt.Errorf("event at position %d in %s has unknown type %q: %w (replay --skip-bad skips such events)", ev.Position, ev.StreamID, ev.Type, domain.ErrUnknownEventType)
		}
	}
	for _, p := range ps {
		if b, ok := p.(batchApplier); ok {
			if err := b.ApplyBatch(ctx, tx, evs); err != nil {
				return fmt.Errorf("projection %s: %w", p.Name(), err)
			}
			continue
		}
		for _, ev := range evs {
			if err := p.Apply(ctx, tx, ev); err != nil {
				return fmt.Errorf("projection %s: apply %s at position %d: %w", p.Name(), ev.Type, ev.Position, err)
			}
		}
	}
	return nil
}

// applySkipping applies evs like applyAll, leaving out (and logging)
// events of unknown type. An event a projection cannot apply fails the
// batch, which is then isolated and poisoned like anywhere else.
func (e *Engine) applySkipping(ctx context.Context, tx *readmodel.Tx, ps []readmodel.Projection, evs []domain.Event) error {
	known := make([]domain.Event, 0, len(evs))
	for _, ev := range evs {
		if !e.registry.Known(ev.Type) {
			e.logger.Warn("skipping event of unknown type", "position", ev.Position, "type", ev.Type, "stream", ev.StreamID)
			continue
		}
		known = append(known, ev)
	}
	if len(known) == 0 {
		return nil
	}
	return e.applyAll(ctx, tx, ps, known)
}

// schemaLock serializes DDL of processes starting at once: PostgreSQL's
// CREATE TABLE IF NOT EXISTS is not safe against a concurrent twin.
const schemaLock = 0x6f6d6567612d70 // "omega-p"

func (e *Engine) lockSchema(ctx context.Context, tx *sql.Tx) error {
	if e.dialect != readmodel.Postgres {
		return nil // SQLite write transactions are exclusive already
	}
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", schemaLock); err != nil {
		return fmt.Errorf("lock projection schema: %w", err)
	}
	return nil
}

// inTx runs fn in a transaction: on the applier session while the engine
// holds one (its locks are what make it the applier), else on the pool.
func (e *Engine) inTx(ctx context.Context, fn func(*sql.Tx) error) error {
	if s := sessionFrom(ctx); s != nil {
		return s.InTx(ctx, fn)
	}
	tx, err := e.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}
