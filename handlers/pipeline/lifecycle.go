package pipeline

import (
	"context"
	"errors"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
)

// Ack tells a sender whose previous message is still being worked on that
// this one is queued, once per turn.
func (d *Driver) Ack(ctx context.Context, turnID string) error {
	st := &turnState{Turn: turn.Turn{ID: turnID}}
	version, err := eventstore.Fold(ctx, d.Store, d.Registry, domain.TurnStream(turnID), st)
	if err != nil {
		return err
	}
	st.Version = version
	if st.Received == nil || st.Acked || st.Completed != nil || st.Granted || st.Denied {
		return nil
	}
	if ok, _, err := d.decide(ctx, st.Received); err != nil || !ok {
		return err // strangers are answered by their own turn, not acknowledged
	}
	profile, err := d.Senders.Load(ctx, st.Received.Channel, st.Received.SenderID)
	if err != nil {
		return err
	}
	text := i18n.Text(d.language(st, profile), i18n.BusyAck)
	ack := turn.AckSent{Text: text}
	// A paced channel skips it if it would delay the reply after it.
	sent, err := d.chat(st).Courtesy(ctx, text)
	if err != nil {
		d.Logger.Warn("busy acknowledgement not delivered", "turn", turnID, "err", err)
	}
	ack.Skipped = err == nil && !sent
	err = d.record(ctx, st, ack)
	if errors.Is(err, eventstore.ErrConcurrency) {
		return nil // the turn started meanwhile
	}
	return err
}

// Transient reports whether a turn's failure may pass by waiting: the
// database does not answer (the turn's stream cannot be read). Anything
// else, a panic or a deterministic error, fails the same way again.
func (d *Driver) Transient(ctx context.Context, turnID string, _ error) bool {
	_, err := d.Store.Load(ctx, domain.TurnStream(turnID), 1)
	return err != nil && ctx.Err() == nil
}

// Abandon ends a turn that cannot run (its handler was poisoned): the
// sender is told in their language that something went wrong and the turn
// is completed with status error, so the sender's next turn can run.
func (d *Driver) Abandon(ctx context.Context, turnID, reason string) error {
	st := &turnState{Turn: turn.Turn{ID: turnID}}
	version, err := eventstore.Fold(ctx, d.Store, d.Registry, domain.TurnStream(turnID), st)
	if err != nil {
		return err
	}
	st.Version = version
	if st.Received == nil || st.Completed != nil {
		return nil
	}
	log := d.Logger.With("turn", turnID, "channel", st.Received.Channel, "sender", st.Received.SenderID)
	log.Error("turn abandoned after its handler was poisoned", "reason", d.Config.Redactor.String(reason))
	profile, err := d.Senders.Load(ctx, st.Received.Channel, st.Received.SenderID)
	if err != nil {
		log.Warn("sender profile unreadable; answering in the message's language", "err", err)
	}
	text := i18n.Text(d.language(st, profile), i18n.ErrUnknown)
	if res, err := d.deliver(ctx, st, text); err != nil {
		log.Warn("failure notice not delivered", "err", err)
		st.addOutcome(turn.ReplyFailed{Kind: "error", Class: deliveryClass(err), Error: d.Config.Redactor.Error(err)})
	} else {
		st.addOutcome(turn.ReplySent{Kind: "error", Text: text, Chunks: res.Chunks, PlatformIDs: res.PlatformIDs, PlainText: res.PlainText})
	}
	st.add(turn.TurnCompleted{Status: turn.StatusError, DurationMs: d.now().Sub(st.Received.ReceivedAt).Milliseconds()})
	return d.flush(ctx, st)
}
