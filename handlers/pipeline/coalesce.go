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
)

// Burst reads a chat's open turns (ids in arrival order, the head first)
// and returns the head and the turns right after it that may become one
// turn with it, and when the latest of them was received. Only messages
// nobody has started on qualify, from the head's sender (in a group, one
// member's message never becomes part of another's turn), and no command,
// scheduled action or message with attachments, which stay turns of their
// own; the burst stops at the first turn that does not qualify, so the
// chat's order holds. A head that already merged
// (a resumed turn) or started returns alone, with a zero time.
func (d *Driver) Burst(ctx context.Context, ids []string) ([]string, time.Time, error) {
	if len(ids) == 0 {
		return nil, time.Time{}, nil
	}
	var last time.Time
	var from sender.SenderRef
	out := make([]string, 0, len(ids))
	for i, id := range ids {
		st, err := d.loadTurn(ctx, id)
		if err != nil {
			return nil, time.Time{}, err
		}
		if i == 0 && st.Received != nil {
			from = st.Received.Sender()
		}
		if !d.mergeable(st) || st.Received.Sender() != from {
			if i == 0 {
				return ids[:1], time.Time{}, nil
			}
			break
		}
		out = append(out, id)
		if at := st.Received.ReceivedAt; at.After(last) {
			last = at
		}
	}
	return out, last, nil
}

// mergeable reports whether a turn's message may join a burst.
func (d *Driver) mergeable(st *turnState) bool {
	m := st.Received
	switch {
	case m == nil, st.Granted, st.Denied, st.Completed != nil, len(st.Merged) > 0, st.MergedInto != "":
		return false
	case m.Task != nil, m.Heartbeat, len(m.Attachments) > 0:
		// Attachments stay with their own turn, which lists and cleans them.
		return false
	case d.Commands != nil && d.Commands.IsCommand(m.Text):
		return false
	}
	return true
}

func (d *Driver) loadTurn(ctx context.Context, id string) (*turnState, error) {
	st := &turnState{Turn: turn.Turn{ID: id}}
	version, err := eventstore.Fold(ctx, d.Store, d.Registry, domain.TurnStream(id), st)
	if err != nil {
		return nil, fmt.Errorf("load turn %s: %w", id, err)
	}
	st.Version = version
	return st, nil
}

// Coalesce makes head answer the messages of later as well: it records
// MessagesMerged (their ids and texts) on head first, then marks each
// later turn merged into head and completes it. A head that recorded its
// merge before a crash only finishes the marks, so the decision is made
// once and every merged message is answered exactly by head.
func (d *Driver) Coalesce(ctx context.Context, head string, later []string) error {
	st, err := d.loadTurn(ctx, head)
	if err != nil {
		return err
	}
	if len(st.Merged) == 0 {
		if len(later) == 0 || !d.mergeable(st) {
			return nil
		}
		texts := make([]string, 0, len(later))
		for _, id := range later {
			t, err := d.loadTurn(ctx, id)
			if err != nil {
				return err
			}
			texts = append(texts, t.Received.Text)
		}
		if err := d.record(ctx, st, turn.MessagesMerged{Turns: later, Texts: texts}); err != nil {
			return fmt.Errorf("merge into turn %s: %w", head, err)
		}
		d.Logger.Info("messages coalesced into one turn", "turn", head, "merged", len(later))
	}
	for _, id := range st.Merged {
		if err := d.markMerged(ctx, id, head); err != nil {
			return err
		}
	}
	return nil
}

// markMerged completes a turn whose message head answers.
func (d *Driver) markMerged(ctx context.Context, id, head string) error {
	for {
		st, err := d.loadTurn(ctx, id)
		if err != nil {
			return err
		}
		if st.Completed != nil || st.Received == nil {
			return nil
		}
		st.add(turn.TurnMergedInto{Turn: head}, turn.TurnCompleted{Status: turn.StatusMerged})
		md := domain.Metadata{CorrelationID: id, CausationID: head, Channel: st.Received.Channel, Sender: st.Received.SenderID}
		evs, err := domain.NewEvents(md, st.pending...)
		if err != nil {
			return err
		}
		_, err = d.Store.Append(ctx, domain.TurnStream(id), eventstore.Exact(st.Version), evs...)
		if errors.Is(err, eventstore.ErrConcurrency) {
			continue // an acknowledgement came in between; look again
		}
		if err != nil {
			return fmt.Errorf("mark turn %s merged into %s: %w", id, head, err)
		}
		return nil
	}
}
