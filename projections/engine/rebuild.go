package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/projections/engine/rowdiff"
	"github.com/omega-gateway/omega/projections/readmodel"
)

// Progress receives rebuild progress; the CLI draws it as a bar or lines.
type Progress interface {
	Start(label string, total int64)
	Add(n int64)
	Finish()
}

type noProgress struct{}

func (noProgress) Start(string, int64) {}
func (noProgress) Add(int64)           {}
func (noProgress) Finish()             {}

const shadowPrefix = "verify_"

// Rebuild drops the given projections' tables, recreates them and applies
// the whole log from position 0, reading it once for all of them. A
// server running beside it notices the reset checkpoints and defers to
// the rebuild, so no event is applied twice; its queries see partial read
// models until the rebuild finishes.
func (e *Engine) Rebuild(ctx context.Context, ps []readmodel.Projection, progress Progress) error {
	if progress == nil {
		progress = noProgress{}
	}
	err := e.inTx(ctx, func(tx *sql.Tx) error {
		if err := e.lockSchema(ctx, tx); err != nil {
			return err
		}
		for _, p := range ps {
			if err := readmodel.DropTables(ctx, tx, p, ""); err != nil {
				return err
			}
			if err := readmodel.CreateTables(ctx, tx, e.dialect, p, ""); err != nil {
				return err
			}
			if err := e.store.SaveCheckpointTx(ctx, tx, readmodel.CheckpointName(p), 0); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("reset projections: %w", err)
	}
	total, err := e.countEvents(ctx)
	if err != nil {
		return err
	}
	progress.Start("replay", total)
	defer progress.Finish()
	_, err = e.catchUp(ctx, ps, "", 0, -1, progress)
	return err
}

// catchUp applies events after pos until the log is exhausted or, when
// stopAt >= 0, the event at stopAt has been applied.
func (e *Engine) catchUp(ctx context.Context, ps []readmodel.Projection, prefix string, pos, stopAt int64, progress Progress) (int64, error) {
	for {
		if stopAt == 0 {
			return pos, nil
		}
		evs, err := e.store.ReadAll(ctx, pos, e.BatchSize)
		if err != nil {
			return pos, fmt.Errorf("read log after %d: %w", pos, err)
		}
		if stopAt > 0 {
			for i, ev := range evs {
				if ev.Position == stopAt {
					evs = evs[:i+1]
					break
				}
			}
		}
		if len(evs) == 0 {
			if stopAt > 0 {
				return pos, fmt.Errorf("log ended before position %d", stopAt)
			}
			return pos, nil
		}
		next, err := e.applyIsolating(ctx, ps, prefix, pos, evs)
		if err != nil {
			return next, err
		}
		progress.Add(int64(len(evs)))
		pos = next
		if stopAt > 0 && pos == stopAt {
			return pos, nil
		}
		if stopAt < 0 && len(evs) < e.BatchSize {
			return pos, nil
		}
	}
}

// countEvents counts the log once every transaction open now has ended:
// one still open would hold back events committed after it from ReadAll.
func (e *Engine) countEvents(ctx context.Context) (int64, error) {
	if err := e.store.Settle(ctx); err != nil {
		return 0, fmt.Errorf("settle the log: %w", err)
	}
	var n int64
	if err := e.db.QueryRowContext(ctx, "SELECT count(*) FROM events").Scan(&n); err != nil {
		return 0, fmt.Errorf("count events: %w", err)
	}
	return n, nil
}

// Diff is one difference between a live read model and its rebuild.
type Diff = rowdiff.Diff

// Verify rebuilds each projection into shadow tables up to the live
// projection's checkpoint and compares the two row by row.
func (e *Engine) Verify(ctx context.Context, ps []readmodel.Projection, progress Progress) ([]Diff, error) {
	if progress == nil {
		progress = noProgress{}
	}
	var diffs []Diff
	for _, p := range ps {
		d, err := e.verifyOne(ctx, p, progress)
		if err != nil {
			return nil, err
		}
		diffs = append(diffs, d...)
	}
	return diffs, nil
}

func (e *Engine) verifyOne(ctx context.Context, p readmodel.Projection, progress Progress) (diffs []Diff, err error) {
	// The shadow tables go whatever happens: a failure or an interrupt
	// must not leave verify_* tables in the live database. The drop runs
	// on a context of its own, since ctx may be what ended the run.
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shadowDropTimeout)
		defer cancel()
		if derr := e.dropShadow(dctx, p); derr != nil {
			err = errors.Join(err, fmt.Errorf("drop shadow tables of %s: %w", p.Name(), derr))
		}
	}()
	// A server running beside us may move the live checkpoint while we
	// compare; retry a few times before reporting differences.
	for attempt := 0; attempt < 3; attempt++ {
		live, err := e.store.Checkpoint(ctx, readmodel.CheckpointName(p))
		if err != nil {
			return nil, err
		}
		if err := e.resetShadow(ctx, p); err != nil {
			return nil, err
		}
		total, err := e.countEvents(ctx)
		if err != nil {
			return nil, err
		}
		progress.Start("verify "+p.Name(), total)
		_, err = e.catchUp(ctx, []readmodel.Projection{p}, shadowPrefix, 0, live, progress)
		progress.Finish()
		if err != nil {
			return nil, err
		}
		diffs, err = e.compare(ctx, p)
		if err != nil {
			return nil, err
		}
		now, err := e.store.Checkpoint(ctx, readmodel.CheckpointName(p))
		if err != nil {
			return nil, err
		}
		if len(diffs) == 0 || now == live {
			break
		}
	}
	return diffs, nil
}

// shadowDropTimeout bounds the clean-up after an interrupted verify.
const shadowDropTimeout = 30 * time.Second

func (e *Engine) dropShadow(ctx context.Context, p readmodel.Projection) error {
	return e.inTx(ctx, func(tx *sql.Tx) error {
		if err := readmodel.DropTables(ctx, tx, p, shadowPrefix); err != nil {
			return err
		}
		return e.store.DeleteCheckpointTx(ctx, tx, shadowPrefix+readmodel.CheckpointName(p))
	})
}

func (e *Engine) resetShadow(ctx context.Context, p readmodel.Projection) error {
	return e.inTx(ctx, func(tx *sql.Tx) error {
		if err := e.lockSchema(ctx, tx); err != nil {
			return err
		}
		if err := readmodel.DropTables(ctx, tx, p, shadowPrefix); err != nil {
			return err
		}
		if err := readmodel.CreateTables(ctx, tx, e.dialect, p, shadowPrefix); err != nil {
			return err
		}
		return e.store.SaveCheckpointTx(ctx, tx, shadowPrefix+readmodel.CheckpointName(p), 0)
	})
}

func (e *Engine) compare(ctx context.Context, p readmodel.Projection) ([]Diff, error) {
	var diffs []Diff
	for _, t := range p.Tables() {
		d, differ, err := rowdiff.Compare(ctx, e.db, p.Name(), t, t, shadowPrefix+t)
		if err != nil {
			return nil, err
		}
		if differ {
			diffs = append(diffs, d)
		}
	}
	return diffs, nil
}

// Registry returns the registry the engine decodes with.
func (e *Engine) Registry() *domain.Registry { return e.registry }

// schemaCurrent reports, without the schema lock, whether every
// projection's recorded version and DDL fingerprint are this code's; any
// doubt answers false, and Setup takes the lock and looks again.
func (e *Engine) schemaCurrent(ctx context.Context) bool {
	for _, p := range e.projections {
		v, err := e.store.Checkpoint(ctx, schemaName(p))
		f, ferr := e.store.Checkpoint(ctx, readmodel.FingerprintName(p))
		if err != nil || ferr != nil || v != schemaVersion(p) || f != readmodel.SchemaFingerprint(e.dialect, p) {
			return false
		}
	}
	return true
}
