package eventstore

import (
	"encoding/json"
	"time"

	"github.com/omega-gateway/omega/domain"
)

// Recorded returns the events of an append as a read of the log returns
// them: at holds each event's recording time as stored, versions the
// stamps the backend put on the metadata. Nil when the lengths disagree.
func Recorded(stream string, events []domain.NewEvent, res AppendResult, at []time.Time, versions SchemaVersions) []domain.Event {
	if len(at) != len(events) || len(res.Positions) != len(events) {
		return nil
	}
	out := make([]domain.Event, len(events))
	for i, e := range events {
		out[i] = domain.Event{
			Position:   res.Positions[i],
			StreamID:   stream,
			Version:    res.FromVersion + int64(i),
			ID:         e.ID,
			Type:       e.Type,
			Data:       append(json.RawMessage(nil), e.Data...),
			Metadata:   StampedMetadata(e, versions),
			RecordedAt: at[i],
		}
	}
	return out
}

// CachedLoader is implemented by stores with a stream cache (eventstore/streamcache) (both
// backends): LoadCached returns a whole stream only if it is in memory,
// never querying the database, so that a caller may look as often as it
// likes.
type CachedLoader interface {
	LoadCached(stream string) ([]domain.Event, bool)
	// WatchCached is streamcache.Cache.Watch.
	WatchCached(stream string) (<-chan struct{}, func())
}
