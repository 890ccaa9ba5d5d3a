// Package domain holds omega's events, aggregates and pure decisions. It
// performs no I/O and imports no infrastructure: everything here can be
// tested with plain table tests.
package domain

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Metadata travels with every event so that the log alone can answer
// "why did this happen?": the correlation id ties every event of one turn
// together, the causation id names the event that caused this one.
type Metadata struct {
	CorrelationID string `json:"correlation_id,omitempty"`
	CausationID   string `json:"causation_id,omitempty"`
	Channel       string `json:"channel,omitempty"`
	Sender        string `json:"sender,omitempty"`
	Project       string `json:"project,omitempty"`
	// SchemaVersion is the version of the payload's shape when it was
	// written; the registry upcasts older shapes on read. Zero means 1.
	SchemaVersion int `json:"schema_version,omitempty"`
}

// Event is a recorded event: an envelope around a JSON payload.
type Event struct {
	// Position identifies the event in the global log. Delivery order is
	// the store's commit order, which on PostgreSQL is not always the
	// order of positions (see eventstore/postgres).
	Position   int64
	StreamID   string
	Version    int64
	ID         uuid.UUID
	Type       string
	Data       json.RawMessage
	Metadata   Metadata
	RecordedAt time.Time
}

// Correlation is the event's correlation id (the turn or process it is
// part of): its metadata's, else, for an event of a turn stream, the
// turn's id. The turn driver records a turn's events without one: their
// stream names the turn.
func (e Event) Correlation() string {
	if e.Metadata.CorrelationID != "" {
		return e.Metadata.CorrelationID
	}
	return TurnIDFromStream(e.StreamID)
}

// NewEvent is an event proposed for appending.
type NewEvent struct {
	ID       uuid.UUID
	Type     string
	Data     json.RawMessage
	Metadata Metadata
}

// Payload is implemented by every event payload type.
type Payload interface {
	EventType() string
}

// NewEventFrom marshals a payload into a NewEvent with a fresh id.
func NewEventFrom(p Payload, md Metadata) (NewEvent, error) {
	data, err := json.Marshal(p)
	if err != nil {
		return NewEvent{}, fmt.Errorf("marshal %s: %w", p.EventType(), err)
	}
	return NewEvent{ID: uuid.New(), Type: p.EventType(), Data: data, Metadata: md}, nil
}

// NewEvents marshals several payloads sharing one metadata.
func NewEvents(md Metadata, ps ...Payload) ([]NewEvent, error) {
	out := make([]NewEvent, 0, len(ps))
	for _, p := range ps {
		e, err := NewEventFrom(p, md)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// TurnStream names the stream of one turn.
func TurnStream(turnID string) string { return "turn-" + turnID }

// TurnIDFromStream returns the turn id of a turn stream, or "".
func TurnIDFromStream(stream string) string {
	id, ok := strings.CutPrefix(stream, "turn-")
	if !ok {
		return ""
	}
	return id
}
