package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/handlers/pipeline/durable"
)

// turnState is a turn's stream folded, plus events decided but not yet
// recorded: pure steps accumulate here and are written in one append
// before the next side effect.
type turnState struct {
	turn.Turn
	pending []domain.Payload
	// effected is set while pending holds the outcome of an effect outside
	// omega (a provider's reply or failure, a message sent). Recomputing it
	// would repeat the effect, so recording it is retried, not given up.
	effected bool
	// senderWritten is set by a step that wrote to the sender's stream
	// (a session started or cleared, markers applied), so that the
	// profile is read again before the next step.
	senderWritten bool
}

func (s *turnState) add(ps ...domain.Payload) {
	for _, p := range ps {
		s.Apply(p, s.Version, time.Time{})
		s.pending = append(s.pending, p)
	}
}

// addOutcome adds the outcome of an effect outside omega (see effected).
func (s *turnState) addOutcome(ps ...domain.Payload) {
	s.add(ps...)
	s.effected = true
}

// loadProfile reads the turn's sender profile.
func (d *Driver) loadProfile(ctx context.Context, st *turnState) (profile sender.SenderProfile, err error) {
	load := func(bool) (err error) {
		profile, err = d.Senders.Load(ctx, st.Received.Channel, st.Received.SenderID)
		return err
	}
	if st.effected {
		// An outcome waits in memory to be recorded with a later step's
		// events: this read must not lose it either.
		return profile, d.durably(ctx, st.ID, "sender profile read", load)
	}
	return profile, load(false)
}

// flush records the pending events with the version the driver read.
// When they hold an effect's outcome the append is retried until it
// succeeds (see durably): the effect must not run again because the
// database was briefly away.
func (d *Driver) flush(ctx context.Context, st *turnState) error {
	if len(st.pending) == 0 {
		return nil
	}
	// No correlation id: the stream names the turn (domain.Event.Correlation).
	md := domain.Metadata{Channel: st.Received.Channel, Sender: st.Received.SenderID}
	evs, err := domain.NewEvents(md, st.pending...)
	if err != nil {
		return err
	}
	stream := domain.TurnStream(st.ID)
	if st.effected {
		var cancel context.CancelFunc
		ctx, cancel = durable.Outlive(ctx, outcomeGrace)
		defer cancel()
	}
	write := func(retry bool) error {
		res, err := d.Store.Append(ctx, stream, eventstore.Exact(st.Version), evs...)
		if err == nil {
			st.Version = res.ToVersion
			return nil
		}
		if retry && errors.Is(err, eventstore.ErrConcurrency) {
			// An earlier attempt may have committed before its answer was lost.
			if ok, lerr := d.recorded(ctx, stream, st.Version, evs); lerr != nil {
				return lerr
			} else if ok {
				st.Version += int64(len(evs))
				return nil
			}
		}
		return fmt.Errorf("record %d event(s): %w", len(evs), err)
	}
	if st.effected {
		err = d.durably(ctx, st.ID, "turn events", write)
	} else {
		err = write(false)
	}
	if err != nil {
		return err
	}
	st.pending, st.effected = nil, false
	return nil
}

// outcomeGrace is how long an effect's outcome is still written for after
// the turn was asked to stop.
const outcomeGrace = 5 * time.Second

// recorded reports whether evs already follow version in stream.
func (d *Driver) recorded(ctx context.Context, stream string, version int64, evs []domain.NewEvent) (bool, error) {
	got, err := d.Store.Load(ctx, stream, version+1)
	if err != nil {
		return false, err
	}
	if len(got) < len(evs) {
		return false, nil
	}
	for i, e := range evs {
		if got[i].ID != e.ID {
			return false, nil
		}
	}
	return true, nil
}

// durably runs write through a database outage (see durable.Write): it
// guards what is recorded after an effect outside omega.
func (d *Driver) durably(ctx context.Context, tn, what string, write func(retry bool) error) error {
	return durable.Write(ctx, d.Logger, tn, what, write)
}

// record flushes the pending events plus ps.
func (d *Driver) record(ctx context.Context, st *turnState, ps ...domain.Payload) error {
	st.add(ps...)
	return d.flush(ctx, st)
}

// recordOutcome flushes the pending events plus the outcome of an effect
// outside omega, retrying through a database outage.
func (d *Driver) recordOutcome(ctx context.Context, st *turnState, ps ...domain.Payload) error {
	st.addOutcome(ps...)
	return d.flush(ctx, st)
}
