package reports

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/eventstore/sqlite"
)

func TestPrintEventsFilters(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "omega.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, stream := range []string{"turn-a", "turn-b"} {
		evs, err := domain.NewEvents(domain.Metadata{}, turn.AckSent{Text: "1"}, turn.AckSent{Text: "2"}, turn.TurnCompleted{Status: "replied"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Append(ctx, stream, eventstore.NoStream, evs...); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		f    eventsFilter
		want int
	}{
		{"all", eventsFilter{}, 6},
		{"type", eventsFilter{typ: "AckSent"}, 4},
		{"stream", eventsFilter{stream: "turn-b"}, 3},
		{"stream after version", eventsFilter{stream: "turn-b", after: 1}, 2},
		{"limit", eventsFilter{typ: "TurnCompleted", limit: 1}, 1},
		{"follow to limit", eventsFilter{follow: true, stream: "turn-a", limit: 3}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.f.asJSON = true
			ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			var out bytes.Buffer
			if err := printEvents(ctx, &out, s, tt.f); err != nil {
				t.Fatal(err)
			}
			if got := strings.Count(out.String(), "\n"); got != tt.want {
				t.Fatalf("printed %d events, want %d:\n%s", got, tt.want, out.String())
			}
		})
	}
}
