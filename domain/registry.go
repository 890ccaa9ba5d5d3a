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

// SchemaVersion returns the current schema version of a type (1 if unknown).
func (r *Registry) SchemaVersion(eventType string) int {
	if reg, ok := r.types[eventType]; ok {
		return reg.version
	}
	return 1
}
