package domain

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
)

// ErrUnknownEventType is returned when the log holds a type no code knows.
var ErrUnknownEventType = errors.New("unknown event type")

// Upcaster turns the payload of one schema version into the next one.
type Upcaster func(data json.RawMessage) (json.RawMessage, error)

type registration struct {
	typ       reflect.Type
	version   int
	upcasters map[int]Upcaster // from version -> to version+1
}

// Registry maps event type names to payload types and upgrades old payload
// shapes on read. It is built once at start-up and then only read.
type Registry struct {
	types map[string]*registration
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{types: map[string]*registration{}}
}

// Register adds a payload type at its current schema version (1 if the
// payload has never changed shape).
func (r *Registry) Register(p Payload, version int) {
	if version < 1 {
		version = 1
	}
	t := reflect.TypeOf(p)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	r.types[p.EventType()] = &registration{typ: t, version: version, upcasters: map[int]Upcaster{}}
}

// RegisterUpcaster adds the step that turns schema version from into
// from+1 for the named type.
func (r *Registry) RegisterUpcaster(eventType string, from int, up Upcaster) error {
	reg, ok := r.types[eventType]
	if !ok {
		return fmt.Errorf("upcaster for %s: %w", eventType, ErrUnknownEventType)
	}
	reg.upcasters[from] = up
	return nil
}

// Known reports whether the type is registered.
func (r *Registry) Known(eventType string) bool {
	_, ok := r.types[eventType]
	return ok
}

// Types lists the registered type names.
func (r *Registry) Types() []string {
	out := make([]string, 0, len(r.types))
	for name := range r.types {
		out = append(out, name)
	}
	return out
}

// Upcast returns the event's data in the current schema version of its type.
func (r *Registry) Upcast(e Event) (json.RawMessage, error) {
	reg, ok := r.types[e.Type]
	if !ok {
		return nil, fmt.Errorf("decode event at position %d (%s): %w", e.Position, e.Type, ErrUnknownEventType)
	}
	return r.upcast(reg, e)
}

func (r *Registry) upcast(reg *registration, e Event) (json.RawMessage, error) {
	data := e.Data
	v := e.Metadata.SchemaVersion
	if v == 0 {
		v = 1
	}
	for ; v < reg.version; v++ {
		up, ok := reg.upcasters[v]
		if !ok {
			return nil, fmt.Errorf("decode event at position %d (%s): no upcaster from schema version %d", e.Position, e.Type, v)
		}
		var err error
		if data, err = up(data); err != nil {
			return nil, fmt.Errorf("upcast event at position %d (%s) from version %d: %w", e.Position, e.Type, v, err)
		}
	}
	return data, nil
}

// Decode returns the typed payload of a recorded event, upcasting it to the
// current schema version first.
func (r *Registry) Decode(e Event) (Payload, error) {
	reg, ok := r.types[e.Type]
	if !ok {
		return nil, fmt.Errorf("decode event at position %d (%s): %w", e.Position, e.Type, ErrUnknownEventType)
	}
	data, err := r.upcast(reg, e)
	if err != nil {
		return nil, err
	}
	ptr := reflect.New(reg.typ)
	if err := json.Unmarshal(data, ptr.Interface()); err != nil {
		return nil, fmt.Errorf("decode event at position %d (%s): %w", e.Position, e.Type, err)
	}
	p, ok := ptr.Elem().Interface().(Payload)
	if !ok {
		return nil, fmt.Errorf("decode event at position %d (%s): registered type is not a payload", e.Position, e.Type)
	}
	return p, nil
}

// Stamps is the registry as the version source of an event store
// (eventstore.SchemaVersions): what the store writes in each event's
// metadata.
func (r *Registry) Stamps() Stamps { return Stamps{r: r} }

// Stamps gives the schema version to write with an event: the type's
// current version when it is above 1, none (0) for version 1, which
// readers take as 1. Most events are of types that never changed shape,
// and each of them is spared `"schema_version":1` (19 bytes).
type Stamps struct{ r *Registry }

// SchemaVersion is the version to stamp on an event of the type, 0 for 1.
func (s Stamps) SchemaVersion(eventType string) int {
	if v := s.r.SchemaVersion(eventType); v > 1 {
		return v
	}
	return 0
}

// SchemaVersion returns the current schema version of a type (1 if unknown).
func (r *Registry) SchemaVersion(eventType string) int {
	if reg, ok := r.types[eventType]; ok {
		return reg.version
	}
	return 1
}

// Sample returns the zero payload of a registered type, nil if unknown:
// what a reader asks of a type without decoding an event.
func (r *Registry) Sample(eventType string) Payload {
	reg, ok := r.types[eventType]
	if !ok {
		return nil
	}
	p, _ := reflect.New(reg.typ).Elem().Interface().(Payload)
	return p
}
