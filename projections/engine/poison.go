package engine

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/system"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/internal/wait"
	"github.com/omega-gateway/omega/projections/readmodel"
)

// poisonAttempts is how often one event is applied alone, the database
// answering each time, before a projection goes on without it.
const poisonAttempts = 3

// applyIsolating applies evs like applyBatch. When the batch fails while
// the database answers, it applies the events one at a time, each in its
// own transaction, so that one event a projection cannot store (a row too
// large for an index, a value the database refuses) is found, retried
// alone and finally skipped for that projection, recorded as
// ProjectionEventPoisoned, instead of stopping every read model for good.
// An outage is never mistaken for a bad event: its error is returned and
// the caller retries. The position returned is where the projections
// stand, also on error (some events may have been applied).
func (e *Engine) applyIsolating(ctx context.Context, ps []readmodel.Projection, prefix string, pos int64, evs []domain.Event) (int64, error) {
	next, err := e.applyBatch(ctx, ps, prefix, pos, evs)
	if err == nil {
		return next, nil
	}
	if !e.eventsFault(ctx, err) {
		return pos, err
	}
	for _, ev := range evs {
		if err := e.applyAlone(ctx, ps, prefix, pos, ev); err != nil {
			return pos, err
		}
		pos = ev.Position
	}
	return pos, nil
}

// applyAlone applies one event in its own transaction, retrying it while
// it fails and the database answers; on the last attempt the projections
// that still fail are skipped (their changes rolled back to a savepoint)
// and the others keep the event's effect.
func (e *Engine) applyAlone(ctx context.Context, ps []readmodel.Projection, prefix string, pos int64, ev domain.Event) error {
	for attempt := 1; ; attempt++ {
		last := attempt == poisonAttempts
		var failed []poisoned
		_, err := e.applyTx(ctx, ps, prefix, pos, ev.Position, func(ctx context.Context, tx *readmodel.Tx) error {
			var err error
			failed, err = e.applyEach(ctx, tx, ps, ev, last)
			return err
		})
		if err == nil {
			for _, f := range failed {
				e.recordPoison(ctx, prefix, f.projection, ev, f.err)
			}
			return nil
		}
		if last || !e.eventsFault(ctx, err) {
			return err
		}
		e.logger.Warn("projection cannot apply an event; retrying it alone", "projections", names(ps), "position", ev.Position, "type", ev.Type, "attempt", attempt, "err", err)
		if err := wait.Sleep(ctx, time.Duration(attempt)*50*time.Millisecond); err != nil {
			return err
		}
	}
}

type poisoned struct {
	projection string
	err        error
}

// applyEach applies ev to each projection behind its own savepoint. With
// skip, a projection that fails for a reason of the event's own (the
// database answering) is rolled back to its savepoint and reported;
// otherwise the first failure is returned.
func (e *Engine) applyEach(ctx context.Context, tx *readmodel.Tx, ps []readmodel.Projection, ev domain.Event, skip bool) ([]poisoned, error) {
	var failed []poisoned
	if e.SkipBad && !e.registry.Known(ev.Type) {
		e.logger.Warn("skipping event of unknown type", "position", ev.Position, "type", ev.Type, "stream", ev.StreamID)
		return nil, nil
	}
	for i, p := range ps {
		sp := fmt.Sprintf("apply_%d", i)
		if _, err := tx.Tx.ExecContext(ctx, "SAVEPOINT "+sp); err != nil {
			return nil, fmt.Errorf("savepoint: %w", err)
		}
		err := e.applyAll(ctx, tx, []readmodel.Projection{p}, []domain.Event{ev})
		if err == nil {
			if _, err := tx.Tx.ExecContext(ctx, "RELEASE SAVEPOINT "+sp); err != nil {
				return nil, fmt.Errorf("release savepoint: %w", err)
			}
			continue
		}
		// The database answering the rollback to the savepoint is the
		// proof that it is up (a ping here would wait for a second
		// connection, which SQLite does not have).
		if !skip || !notInfrastructure(ctx, err) {
			return nil, err
		}
		if _, rerr := tx.Tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT "+sp); rerr != nil {
			return nil, fmt.Errorf("roll back %s after %w: %w", p.Name(), err, rerr)
		}
		failed = append(failed, poisoned{projection: p.Name(), err: err})
	}
	return failed, nil
}

// recordPoison logs a skipped event and, for the live read models,
// records it in the log once (a rebuild that skips it again finds the
// record and adds none). A shadow rebuild (verify) only logs.
func (e *Engine) recordPoison(ctx context.Context, prefix, projection string, ev domain.Event, cause error) {
	e.logger.Error("projection skipped an event it cannot apply (recorded as ProjectionEventPoisoned)",
		"projection", projection, "position", ev.Position, "stream", ev.StreamID, "type", ev.Type, "err", cause, "shadow", prefix != "")
	if prefix != "" {
		return
	}
	recorded, err := e.Poisoned(ctx)
	if err != nil {
		e.logger.Error("projection: read recorded poisoned events", "err", err)
	}
	for _, p := range recorded {
		if p.Projection == projection && p.Position == ev.Position {
			return
		}
	}
	rec := system.ProjectionEventPoisoned{Projection: projection, Position: ev.Position, StreamID: ev.StreamID,
		Type: ev.Type, EventID: ev.ID.String(), Error: cause.Error()}
	ne, err := domain.NewEventFrom(rec, domain.Metadata{CorrelationID: ev.Correlation(), CausationID: ev.ID.String()})
	if err == nil {
		_, err = e.store.Append(context.WithoutCancel(ctx), system.ProjectionPoisonStream, eventstore.Any, ne)
	}
	if err != nil {
		e.logger.Error("projection: record poisoned event", "projection", projection, "position", ev.Position, "err", err)
	}
}

// Poisoned returns the events projections skipped, as recorded in the log.
func (e *Engine) Poisoned(ctx context.Context) ([]system.ProjectionEventPoisoned, error) {
	evs, err := e.store.Load(ctx, system.ProjectionPoisonStream, 1)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", system.ProjectionPoisonStream, err)
	}
	out := make([]system.ProjectionEventPoisoned, 0, len(evs))
	for _, ev := range evs {
		p, err := e.registry.Decode(ev)
		if err != nil {
			return nil, err
		}
		if rec, ok := p.(system.ProjectionEventPoisoned); ok {
			out = append(out, rec)
		}
	}
	return out, nil
}

// eventsFault tells a failure caused by the events being applied from one
// of the database or the process: only the former may ever be skipped.
// An error of a connection, of resources, of a conflict between
// transactions or of an event type this binary does not know is never the
// event's fault; nor is any error while the database does not answer.
func (e *Engine) eventsFault(ctx context.Context, err error) bool {
	if !notInfrastructure(ctx, err) {
		return false
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var one int
	return e.db.QueryRowContext(pctx, "SELECT 1").Scan(&one) == nil
}

func notInfrastructure(ctx context.Context, err error) bool {
	var moved *movedError
	return ctx.Err() == nil && !errors.As(err, &moved) && !errors.Is(err, domain.ErrUnknownEventType) && !transient(err)
}

func transient(err error) bool {
	// PostgreSQL drivers expose the SQLSTATE; its first two characters
	// are the class.
	var coded interface{ SQLState() string }
	if errors.As(err, &coded) && len(coded.SQLState()) >= 2 {
		switch coded.SQLState()[:2] {
		case "08", "40", "53", "55", "57", "58", "XX":
			// connection, transaction rollback, resources, lock not
			// available, operator intervention, system, internal
			return true
		}
		return false
	}
	var netErr net.Error
	if errors.As(err, &netErr) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, context.Canceled) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "SQLITE_BUSY") || strings.Contains(msg, "database is locked") || strings.Contains(msg, "connection refused")
}
