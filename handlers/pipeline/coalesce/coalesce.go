// Package coalesce makes one turn of a sender's messages that follow each
// other before anyone started on them: it picks the burst and records the
// merge on the head turn, then completes each merged turn as answered by
// the head.
package coalesce

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
)

// Logger notes a merge (slog.Logger).
type Logger interface {
	Info(msg string, args ...any)
}

// Coalescer reads and merges turns.
type Coalescer struct {
	store    eventstore.Store
	registry *domain.Registry
	// isCommand reports whether a message is a bot command (nil: none is).
	isCommand func(text string) bool
	logger    Logger
}

// New checks the coalescer's collaborators: the store, registry and
// logger are required; isCommand may be nil (no commands).
func New(store eventstore.Store, registry *domain.Registry, isCommand func(string) bool, logger Logger) (*Coalescer, error) {
	if store == nil || registry == nil || logger == nil {
		return nil, errors.New("coalesce: needs a store, registry and logger")
	}
	return &Coalescer{store: store, registry: registry, isCommand: isCommand, logger: logger}, nil
}

// Burst reads a chat's open turns (ids in arrival order, the head first)
// and returns the head and the turns right after it that may become one
// turn with it, and when the latest of them was received. Only messages
// nobody has started on qualify, from the head's sender (in a group, one
// member's message never becomes part of another's turn), and no command,
// scheduled action or message with attachments, which stay turns of their
// own; the burst stops at the first turn that does not qualify, so the
// chat's order holds. A head that already merged
// (a resumed turn) or started returns alone, with a zero time.
func (c *Coalescer) Burst(ctx context.Context, ids []string) ([]string, time.Time, error) {
	if len(ids) == 0 {
		return nil, time.Time{}, nil
	}
	var last time.Time
	var head *turn.MessageReceived // mergeable, so never nil past the first
	out := make([]string, 0, len(ids))
	for i, id := range ids {
		t, err := c.load(ctx, id)
		if err != nil {
			return nil, time.Time{}, err
		}
		if i == 0 {
			head = t.Received
		}
		if !c.mergeable(t) || t.Received.Sender() != head.Sender() {
			if i == 0 {
				return ids[:1], time.Time{}, nil
			}
			break
		}
		out = append(out, id)
		if at := t.Received.ReceivedAt; at.After(last) {
			last = at
		}
	}
	return out, last, nil
}

// mergeable reports whether a turn's message may join a burst.
func (c *Coalescer) mergeable(t *turn.Turn) bool {
	m := t.Received
	switch {
	case m == nil, t.Granted, t.Denied, t.Completed != nil, len(t.Merged) > 0, t.MergedInto != "":
		return false
	case m.Task != nil, m.Heartbeat, len(m.Attachments) > 0:
		// Attachments stay with their own turn, which lists and cleans them.
		return false
	case c.isCommand != nil && c.isCommand(m.Text):
		return false
	}
	return true
}

func (c *Coalescer) load(ctx context.Context, id string) (*turn.Turn, error) {
	t := &turn.Turn{ID: id}
	version, err := eventstore.Fold(ctx, c.store, c.registry, domain.TurnStream(id), t)
	if err != nil {
		return nil, fmt.Errorf("load turn %s: %w", id, err)
	}
	t.Version = version
	return t, nil
}

// Coalesce makes head answer the messages of later as well: it records
// MessagesMerged (their ids and texts) on head first, then marks each
// later turn merged into head and completes it. A head that recorded its
// merge before a crash only finishes the marks, so the decision is made
// once and every merged message is answered exactly by head.
func (c *Coalescer) Coalesce(ctx context.Context, head string, later []string) error {
	t, err := c.load(ctx, head)
	if err != nil {
		return err
	}
	if len(t.Merged) == 0 {
		if len(later) == 0 || !c.mergeable(t) {
			return nil
		}
		if err := c.merge(ctx, t, later); err != nil {
			return err
		}
	}
	for _, id := range t.Merged {
		if err := c.markMerged(ctx, id, head); err != nil {
			return err
		}
	}
	return nil
}

// merge records on head the messages of later it answers.
func (c *Coalescer) merge(ctx context.Context, head *turn.Turn, later []string) error {
	texts := make([]string, 0, len(later))
	for _, id := range later {
		t, err := c.load(ctx, id)
		if err != nil {
			return err
		}
		texts = append(texts, t.Received.Text)
	}
	merged := turn.MessagesMerged{Turns: later, Texts: texts}
	// No correlation id: the stream names the turn (domain.Event.Correlation).
	md := domain.Metadata{Channel: head.Received.Channel, Sender: head.Received.SenderID}
	if err := c.append(ctx, head, md, merged); err != nil {
		return fmt.Errorf("merge into turn %s: %w", head.ID, err)
	}
	head.Apply(merged, head.Version, time.Time{})
	c.logger.Info("messages coalesced into one turn", "turn", head.ID, "merged", len(later))
	return nil
}

// markMerged completes a turn whose message head answers.
func (c *Coalescer) markMerged(ctx context.Context, id, head string) error {
	for {
		t, err := c.load(ctx, id)
		if err != nil {
			return err
		}
		if t.Completed != nil || t.Received == nil {
			return nil
		}
		md := domain.Metadata{CorrelationID: id, CausationID: head, Channel: t.Received.Channel, Sender: t.Received.SenderID}
		err = c.append(ctx, t, md, turn.TurnMergedInto{Turn: head}, turn.TurnCompleted{Status: turn.StatusMerged})
		if errors.Is(err, eventstore.ErrConcurrency) {
			continue // an acknowledgement came in between; look again
		}
		if err != nil {
			return fmt.Errorf("mark turn %s merged into %s: %w", id, head, err)
		}
		return nil
	}
}

// append records ps on t's stream at the version t was read at.
func (c *Coalescer) append(ctx context.Context, t *turn.Turn, md domain.Metadata, ps ...domain.Payload) error {
	evs, err := domain.NewEvents(md, ps...)
	if err != nil {
		return err
	}
	_, err = c.store.Append(ctx, domain.TurnStream(t.ID), eventstore.Exact(t.Version), evs...)
	return err
}
