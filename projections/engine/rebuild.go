package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/omega-gateway/omega/domain"
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
type Diff struct {
	Projection, Table string
	OnlyLive          []string // rows in the live table the rebuild lacks
	OnlyRebuilt       []string // rows the rebuild has and the live table lacks
}

func (d Diff) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s.%s: %d row(s) differ\n", d.Projection, d.Table, len(d.OnlyLive)+len(d.OnlyRebuilt))
	for _, r := range d.OnlyLive {
		fmt.Fprintf(&b, "  - live:    %s\n", r)
	}
	for _, r := range d.OnlyRebuilt {
		fmt.Fprintf(&b, "  + rebuilt: %s\n", r)
	}
	return b.String()
}

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
		live, err := e.rows(ctx, t)
		if err != nil {
			return nil, err
		}
		rebuilt, err := e.rows(ctx, shadowPrefix+t)
		if err != nil {
			return nil, err
		}
		d := Diff{Projection: p.Name(), Table: t}
		for r, n := range live {
			for i := rebuilt[r]; i < n; i++ {
				d.OnlyLive = append(d.OnlyLive, r)
			}
		}
		for r, n := range rebuilt {
			for i := live[r]; i < n; i++ {
				d.OnlyRebuilt = append(d.OnlyRebuilt, r)
			}
		}
		if len(d.OnlyLive)+len(d.OnlyRebuilt) > 0 {
			sort.Strings(d.OnlyLive)
			sort.Strings(d.OnlyRebuilt)
			diffs = append(diffs, d)
		}
	}
	return diffs, nil
}

// rows returns a table's rows rendered as text, counted as a multiset.
func (e *Engine) rows(ctx context.Context, table string) (map[string]int, error) {
	rs, err := e.db.QueryContext(ctx, "SELECT * FROM "+table)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", table, err)
	}
	defer rs.Close()
	cols, err := rs.Columns()
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rs.Next() {
		if err := rs.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("scan %s: %w", table, err)
		}
		parts := make([]string, len(cols))
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			parts[i] = fmt.Sprintf("%s=%v", cols[i], v)
		}
		out["("+strings.Join(parts, ", ")+")"]++
	}
	return out, rs.Err()
}

// Registry returns the registry the engine decodes with.
func (e *Engine) Registry() *domain.Registry { return e.registry }
