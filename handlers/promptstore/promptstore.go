// Package promptstore records a turn's prompt by reference and
// reconstructs it. Each distinct sizeable prompt text (a prompt file, a
// section, a block) is stored once, as a PromptTextStored event on its
// content-addressed stream prompt-<sha256>, before the ContextBuilt that
// names it; the history names the turns its messages come from. Resolve
// gives back the exact text the provider was given.
package promptstore

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/markers"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
)

// Loader reads a stream (the event store, or a read-only source).
type Loader interface {
	Load(ctx context.Context, stream string, fromVersion int64) ([]domain.Event, error)
}

// Decoder turns events into payloads (domain.Registry).
type Decoder interface {
	Decode(e domain.Event) (domain.Payload, error)
}

// maxCached bounds the texts kept in memory for resolving; maxKnown the
// hashes remembered as stored (forgetting one costs a lookup, no more).
const (
	maxCached = 256
	maxKnown  = 1 << 16
)

// Store stores prompt texts once and remembers which are stored, so a
// text already present costs no database round trip on a turn.
type Store struct {
	events   eventstore.Store
	registry Decoder

	mu    sync.Mutex
	known map[string]bool   // hashes whose stream exists
	texts map[string]string // recently resolved texts
}

// New returns a prompt store on the event store.
func New(events eventstore.Store, reg Decoder) (*Store, error) {
	if events == nil || reg == nil {
		return nil, errors.New("promptstore: needs an event store and a registry")
	}
	return &Store{events: events, registry: reg, known: map[string]bool{}, texts: map[string]string{}}, nil
}

// Record stores the texts the context references that are not stored yet
// and returns the context to record. The texts are on record before the
// context is, so a crash between the two leaves at worst a text nobody
// names yet.
func (s *Store) Record(ctx context.Context, c turn.ContextBuilt, received string, md domain.Metadata) (turn.ContextBuilt, error) {
	ref, texts := c.ByReference(received)
	for hash, text := range texts {
		if err := s.ensure(ctx, hash, text, md); err != nil {
			return turn.ContextBuilt{}, err
		}
	}
	return ref, nil
}

// ensure stores one text unless its stream exists: two processes storing
// the same text both succeed, one of them by finding it there.
func (s *Store) ensure(ctx context.Context, hash, text string, md domain.Metadata) error {
	if s.isKnown(hash) {
		return nil
	}
	stream := turn.PromptTextStream(hash)
	v, err := s.events.StreamVersion(ctx, stream)
	if err != nil {
		return fmt.Errorf("promptstore: look up %s: %w", stream, err)
	}
	if v == 0 {
		ev, err := domain.NewEventFrom(turn.PromptTextStored{Text: text}, domain.Metadata{CorrelationID: md.CorrelationID, CausationID: md.CausationID})
		if err != nil {
			return err
		}
		if _, err := s.events.Append(ctx, stream, eventstore.NoStream, ev); err != nil && !errors.Is(err, eventstore.ErrConcurrency) {
			return fmt.Errorf("promptstore: store %s: %w", stream, err)
		}
	}
	s.mu.Lock()
	if len(s.known) >= maxKnown {
		clear(s.known)
	}
	s.known[hash] = true
	s.mu.Unlock()
	return nil
}

func (s *Store) isKnown(hash string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.known[hash]
}

// Resolve returns the context of turn turnID with its texts in full,
// read from the store this prompt store writes to.
func (s *Store) Resolve(ctx context.Context, turnID string, c turn.ContextBuilt) (turn.ContextBuilt, error) {
	if !c.ByReferenceRecorded() {
		return c, nil
	}
	return c.Resolve(turn.Resolver{
		Text: func(hash string) (string, error) {
			s.mu.Lock()
			t, ok := s.texts[hash]
			s.mu.Unlock()
			if ok {
				return t, nil
			}
			t, err := Text(ctx, s.events, s.registry, hash)
			if err != nil {
				return "", err
			}
			s.mu.Lock()
			if len(s.texts) >= maxCached {
				clear(s.texts)
			}
			s.texts[hash], s.known[hash] = t, true
			s.mu.Unlock()
			return t, nil
		},
		History:  func(h turn.HistoryMessage) (string, error) { return HistoryText(ctx, s.events, s.registry, h) },
		Received: func() (string, error) { return receivedText(ctx, s.events, s.registry, turnID) },
	})
}

// Resolve returns the context of turn turnID with its texts in full,
// read from src.
func Resolve(ctx context.Context, src Loader, reg Decoder, turnID string, c turn.ContextBuilt) (turn.ContextBuilt, error) {
	if !c.ByReferenceRecorded() {
		return c, nil
	}
	return c.Resolve(turn.Resolver{
		Text:     func(hash string) (string, error) { return Text(ctx, src, reg, hash) },
		History:  func(h turn.HistoryMessage) (string, error) { return HistoryText(ctx, src, reg, h) },
		Received: func() (string, error) { return receivedText(ctx, src, reg, turnID) },
	})
}

// receivedText is the text of a turn's message as received.
func receivedText(ctx context.Context, src Loader, reg Decoder, turnID string) (string, error) {
	text, found, err := turnText(ctx, src, reg, turnID, "user")
	if err == nil && !found {
		err = fmt.Errorf("turn %s has no message", turnID)
	}
	return text, err
}

// Text reads a stored prompt text.
func Text(ctx context.Context, src Loader, reg Decoder, hash string) (string, error) {
	evs, err := src.Load(ctx, turn.PromptTextStream(hash), 1)
	if err != nil {
		return "", fmt.Errorf("read prompt text %s: %w", hash, err)
	}
	for _, e := range evs {
		p, err := reg.Decode(e)
		if err != nil {
			return "", err
		}
		if t, ok := p.(turn.PromptTextStored); ok {
			return t.Text, nil
		}
	}
	return "", fmt.Errorf("prompt text %s is not stored", hash)
}

// HistoryText is a history message's text as a context gave it to the
// provider: the user's message of its turn (neutralized, as the driver
// does) or the turn's reply.
func HistoryText(ctx context.Context, src Loader, reg Decoder, h turn.HistoryMessage) (string, error) {
	text, found, err := turnText(ctx, src, reg, h.Turn, h.Role)
	if err != nil {
		return "", err
	}
	if !found {
		return "", fmt.Errorf("turn %s has no %s message", h.Turn, h.Role)
	}
	if h.Role != "assistant" {
		text = markers.Neutralize(text)
	}
	return text, nil
}

// turnText is a turn's message as received (role user) or its reply
// (role assistant: the last ReplyReady, as the messages read model keeps).
func turnText(ctx context.Context, src Loader, reg Decoder, turnID, role string) (string, bool, error) {
	evs, err := src.Load(ctx, domain.TurnStream(turnID), 1)
	if err != nil {
		return "", false, fmt.Errorf("read turn %s: %w", turnID, err)
	}
	want := turn.MessageReceived{}.EventType()
	if role == "assistant" {
		want = turn.ReplyReady{}.EventType()
	}
	text, found := "", false
	for _, e := range evs {
		if e.Type != want {
			continue
		}
		p, err := reg.Decode(e)
		if err != nil {
			return "", false, err
		}
		switch ev := p.(type) {
		case turn.MessageReceived:
			return ev.Text, true, nil
		case turn.ReplyReady:
			text, found = ev.Text, true
		}
	}
	return text, found, nil
}

// Referenced lists the prompt text hashes a context names.
func Referenced(c turn.ContextBuilt) []string {
	var out []string
	for _, parts := range [][]turn.TextPart{c.SystemParts, c.PromptParts} {
		for _, p := range parts {
			if p.Hash != "" {
				out = append(out, p.Hash)
			}
		}
	}
	return out
}
