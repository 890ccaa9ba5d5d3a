package engine

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/internal/wait"
	"github.com/omega-gateway/omega/projections/engine/pglock"
	"github.com/omega-gateway/omega/projections/readmodel"
)

// ApplyExclusively makes Run apply each projection only while this engine
// holds the projection's advisory lock (PostgreSQL, where several
// processes share the read models): one process applies a read model, the
// others read its tables and hear of its commits. A holder that dies
// loses its locks at once (its connection closes) or, when it merely
// stops answering, after ttl*3/5; the others try every ttl/5, so a read
// model has a new applier within ttl. It is an error on SQLite, whose
// one process applies everything anyway, or a store without
// announcements.
func (e *Engine) ApplyExclusively(ttl time.Duration) error {
	if e.dialect != readmodel.Postgres {
		return fmt.Errorf("exclusive appliers need PostgreSQL, not %s", e.dialect)
	}
	if _, ok := e.store.(announcer); !ok {
		return fmt.Errorf("exclusive appliers need a store that announces checkpoints")
	}
	if ttl < 500*time.Millisecond {
		return fmt.Errorf("applier TTL %s is under 500ms", ttl)
	}
	e.exclusiveTTL = ttl
	return nil
}

// announcer is a store on which the process applying a read model
// announces its commits and every process hears of them.
type announcer interface {
	AnnounceCheckpointsTx(ctx context.Context, tx *sql.Tx, consumers []string, position int64) error
	WatchCheckpoints(ctx context.Context, fn func(eventstore.CheckpointNotice))
}

// Holding returns the names of the projections this engine applies now
// (all of them when it applies without locks and runs).
func (e *Engine) Holding() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, p := range e.projections {
		if _, ok := e.held[p.Name()]; ok {
			out = append(out, p.Name())
		}
	}
	return out
}

// Applying reports whether the engine applies any projection now: only
// then does it need other processes' events as soon as they commit.
func (e *Engine) Applying() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.held) > 0
}

// runExclusive is Run under ApplyExclusively for one lane's projections
// ps: it opens a session, applies those whose locks it takes, and opens
// another when the session is lost.
func (e *Engine) runExclusive(ctx context.Context, ps []readmodel.Projection) error {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		s, err := pglock.Open(ctx, e.db, e.exclusiveTTL)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			e.logger.Error("projections: open the applier session; retrying", "err", err, "retry_in", backoff)
			if wait.Sleep(ctx, backoff) != nil {
				break
			}
			backoff = min(backoff*2, e.exclusiveTTL)
			continue
		}
		backoff = 100 * time.Millisecond
		e.holdAndApply(ctx, s, ps)
		e.setHeld(nil, ps, nil)
		s.Close()
	}
	return ctx.Err()
}

// holdAndApply applies the projections of ps whose locks s holds, taking
// the others' as they come free, until ctx ends or s is lost.
func (e *Engine) holdAndApply(ctx context.Context, s *pglock.Session, ps []readmodel.Projection) {
	var held []readmodel.Projection
	stop, done := func() {}, make(chan struct{})
	close(done)
	defer func() {
		stop()
		<-done
	}()
	tick := time.NewTicker(e.exclusiveTTL / 5)
	defer tick.Stop()
	for {
		took, err := e.takeFree(ctx, s, ps, held)
		if err != nil {
			if ctx.Err() == nil {
				e.logger.Warn("projections: the applier session is lost; opening another", "applying", names(held), "err", err)
			}
			return
		}
		if len(took) > 0 {
			stop()
			<-done
			held = append(held, took...)
			e.logger.Info("projections: applying", "projections", names(took), "all", names(held))
			e.setHeld(s, ps, held)
			gctx, cancel := context.WithCancel(withSession(ctx, s))
			finished := make(chan struct{})
			go func() {
				defer close(finished)
				_ = e.runGroups(gctx, held)
			}()
			stop, done = cancel, finished
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// takeFree tries the locks of the projections of ps not in held; with none
// left to take it only pings the session.
func (e *Engine) takeFree(ctx context.Context, s *pglock.Session, ps, held []readmodel.Projection) ([]readmodel.Projection, error) {
	have := map[string]bool{}
	for _, p := range held {
		have[p.Name()] = true
	}
	var free []string
	for _, p := range ps {
		if !have[p.Name()] {
			free = append(free, p.Name())
		}
	}
	took, err := s.TryLock(ctx, free)
	if err != nil {
		return nil, err
	}
	var out []readmodel.Projection
	for _, n := range took {
		out = append(out, e.find(n))
	}
	return out, nil
}

// setHeld records which of a lane's projections the engine applies now,
// and the session it applies them on (nil: the pool).
func (e *Engine) setHeld(s *pglock.Session, lane, held []readmodel.Projection) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, p := range lane {
		delete(e.held, p.Name())
	}
	for _, p := range held {
		e.held[p.Name()] = s
	}
}

// watchCheckpoints keeps AppliedThrough and Applied true for the
// projections other processes apply: their appliers announce each commit.
func (e *Engine) watchCheckpoints(ctx context.Context) {
	a := e.store.(announcer)
	a.WatchCheckpoints(ctx, func(n eventstore.CheckpointNotice) {
		if n.Missed {
			go e.readCheckpoints(ctx)
			return
		}
		e.noticed(n.Consumers, n.Position)
	})
	e.readCheckpoints(ctx)
}

// noticed records that another process committed projections through pos.
func (e *Engine) noticed(projections []string, pos int64) {
	moved := false
	e.mu.Lock()
	for _, n := range projections {
		_, held := e.held[n]
		if at, known := e.through[n]; !held && (!known || at != pos) {
			e.through[n] = pos
			moved = true
		}
	}
	e.mu.Unlock()
	if moved { // this engine's own commits were signalled already
		e.applied.Notify()
	}
}

// readCheckpoints reads the checkpoints of the projections this engine
// does not apply (at start, and when announcements may have been lost).
func (e *Engine) readCheckpoints(ctx context.Context) {
	for _, p := range e.projections {
		pos, err := e.store.Checkpoint(ctx, readmodel.CheckpointName(p))
		if err != nil {
			if ctx.Err() == nil {
				e.logger.Warn("projections: read another applier's checkpoint", "projection", p.Name(), "err", err)
			}
			return
		}
		e.noticed([]string{p.Name()}, pos)
	}
}

// Await tells the engine that a follower of this process waits for the
// read models to show what the log holds (a command, a turn after one
// whose exchange was not kept) until done is called. Meanwhile a process
// that applies them reads other processes' events as they commit
// (Urgent); otherwise at the store's lazy pace: nearly every turn learns
// what it needs from this process's own appends.
func (e *Engine) Await() (done func()) {
	e.mu.Lock()
	e.waiters++
	wake := e.wake
	applying := len(e.held) > 0
	e.mu.Unlock()
	if wake != nil && applying {
		wake()
	}
	return func() {
		e.mu.Lock()
		e.waiters--
		e.mu.Unlock()
	}
}

// Urgent reports whether the engine applies a read model a follower of
// this process waits for now (Await).
func (e *Engine) Urgent() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.held) > 0 && e.waiters > 0
}

// OnAwait sets what wakes the reader of the log when a wait begins.
func (e *Engine) OnAwait(wake func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.wake = wake
}

func names(ps []readmodel.Projection) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name()
	}
	return out
}
