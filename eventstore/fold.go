package eventstore

import (
	"context"
	"fmt"
	"time"

	"github.com/omega-gateway/omega/domain"
)

// Aggregate is domain state folded from a stream's payloads.
type Aggregate interface {
	Apply(p domain.Payload, version int64, recordedAt time.Time)
}

// Fold applies a whole stream to state and returns the stream's version
// (0: no stream), the version to append after.
func Fold(ctx context.Context, s Store, reg *domain.Registry, stream string, state Aggregate) (int64, error) {
	evs, err := s.Load(ctx, stream, 1)
	if err != nil {
		return 0, fmt.Errorf("load %s: %w", stream, err)
	}
	var version int64
	for _, e := range evs {
		p, err := reg.Decode(e)
		if err != nil {
			return 0, fmt.Errorf("decode %s@%d: %w", stream, e.Version, err)
		}
		version = e.Version
		state.Apply(p, version, e.RecordedAt)
	}
	return version, nil
}
