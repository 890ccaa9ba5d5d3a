package promptstore_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/events"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/eventstore/postgres"
	"github.com/omega-gateway/omega/eventstore/sqlite"
	"github.com/omega-gateway/omega/handlers/promptstore"
	"github.com/omega-gateway/omega/internal/pgtest"
)

var quiet = slog.New(slog.DiscardHandler)

func registry() *domain.Registry {
	r := events.NewRegistry()
	return r
}

// stores opens each backend with the registry stamping schema versions.
func stores(t *testing.T) map[string]eventstore.Store {
	reg := registry()
	lite, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "omega.db"), sqlite.Options{Logger: quiet, Versions: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lite.Close() })
	pg, err := postgres.Open(context.Background(), pgtest.DSN(t), postgres.Options{Logger: quiet, Versions: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pg.Close() })
	return map[string]eventstore.Store{"sqlite": lite, "postgres": pg}
}

// counting counts the round trips a prompt store makes to look up or
// store texts.
type counting struct {
	eventstore.Store
	lookups, appends atomic.Int64
}

func (c *counting) StreamVersion(ctx context.Context, stream string) (int64, error) {
	c.lookups.Add(1)
	return c.Store.StreamVersion(ctx, stream)
}

func (c *counting) Append(ctx context.Context, stream string, expected eventstore.ExpectedVersion, evs ...domain.NewEvent) (eventstore.AppendResult, error) {
	c.appends.Add(1)
	return c.Store.Append(ctx, stream, expected, evs...)
}

var identity = strings.Repeat("You are omega, a personal agent — 你好. ", 20)

func sampleContext(tn string) turn.ContextBuilt {
	sys := []turn.TextPiece{{Text: identity, Stable: true}, {Text: "\n\n"}, {Text: "Current time: now"}}
	return turn.ContextBuilt{ConversationID: tn, Model: "m", Message: "hola", Prompt: "hola",
		System: identity + "\n\nCurrent time: now", SystemPieces: sys}
}

func newStore(t *testing.T, s eventstore.Store) *promptstore.Store {
	t.Helper()
	ps, err := promptstore.New(s, registry())
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// streamLen is how many events a stream holds.
func streamLen(t *testing.T, s eventstore.Store, stream string) int {
	t.Helper()
	evs, err := s.Load(context.Background(), stream, 1)
	if err != nil {
		t.Fatal(err)
	}
	return len(evs)
}

// Two processes storing the same text at once store it once; both get
// the context by reference and it resolves to the text. A process that
// knows the text makes no round trip for it.
func TestTextStoredOnce(t *testing.T) {
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			c := &counting{Store: s}
			procs := []*promptstore.Store{newStore(t, c), newStore(t, c)}
			refs := make([]turn.ContextBuilt, len(procs))
			var wg sync.WaitGroup
			for i, p := range procs {
				wg.Go(func() {
					var err error
					if refs[i], err = p.Record(ctx, sampleContext("t1"), "", domain.Metadata{CorrelationID: "t1"}); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			hash := turn.TextHash(identity)
			if n := streamLen(t, s, turn.PromptTextStream(hash)); n != 1 {
				t.Fatalf("the text is stored %d times", n)
			}
			for _, ref := range refs {
				if len(ref.SystemParts) != 2 || ref.SystemParts[0].Hash != hash || ref.System != "" {
					t.Fatalf("recorded %+v", ref)
				}
				got, err := promptstore.Resolve(ctx, s, registry(), "t1", ref)
				if err != nil {
					t.Fatal(err)
				}
				if got.System != sampleContext("t1").System {
					t.Fatalf("resolved %q", got.System)
				}
			}
			before := c.lookups.Load() + c.appends.Load()
			if _, err := procs[0].Record(ctx, sampleContext("t2"), "hola", domain.Metadata{}); err != nil {
				t.Fatal(err)
			}
			if after := c.lookups.Load() + c.appends.Load(); after != before {
				t.Fatalf("a known text cost %d round trips", after-before)
			}
		})
	}
}

// The text is on record before Record returns, so before the context that
// names it: a process that dies between the two leaves the text, and the
// turn, run again by a new process, records its context and resolves it.
func TestTextSurvivesACrashBeforeTheContext(t *testing.T) {
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			first := newStore(t, s)
			if _, err := first.Record(ctx, sampleContext("t1"), "hola", domain.Metadata{}); err != nil {
				t.Fatal(err)
			}
			stream := turn.PromptTextStream(turn.TextHash(identity))
			if n := streamLen(t, s, stream); n != 1 {
				t.Fatalf("the text is not on record when Record returns (%d events)", n)
			}
			// The process dies here; a new one runs the turn again.
			second := newStore(t, s)
			ref, err := second.Record(ctx, sampleContext("t1"), "hola", domain.Metadata{})
			if err != nil {
				t.Fatal(err)
			}
			evs, err := domain.NewEvents(domain.Metadata{CorrelationID: "t1"}, turn.MessageReceived{Text: "hola"}, ref)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Append(ctx, domain.TurnStream("t1"), eventstore.NoStream, evs...); err != nil {
				t.Fatal(err)
			}
			loaded, err := s.Load(ctx, domain.TurnStream("t1"), 2)
			if err != nil {
				t.Fatal(err)
			}
			p, err := registry().Decode(loaded[0])
			if err != nil {
				t.Fatal(err)
			}
			got, err := second.Resolve(ctx, "t1", p.(turn.ContextBuilt))
			if err != nil {
				t.Fatal(err)
			}
			want := sampleContext("t1")
			if got.System != want.System || got.Message != "hola" || got.Prompt != "hola" {
				t.Fatalf("resolved %+v", got)
			}
			if n := streamLen(t, s, stream); n != 1 {
				t.Fatalf("the text is stored %d times", n)
			}
		})
	}
}

// A history names its turns; resolving reads the user's message
// (neutralized as the driver gives it) and the reply from them.
func TestHistoryFromTurns(t *testing.T) {
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			md := domain.Metadata{CorrelationID: "h1"}
			evs, err := domain.NewEvents(md, turn.MessageReceived{Text: "recuérdame SCHEDULE: x | 2030-01-01T00:00:00 | once"},
				turn.ReplyReady{Text: "first draft"}, turn.ReplyReady{Text: "¡Hecho! 🙂"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Append(ctx, domain.TurnStream("h1"), eventstore.NoStream, evs...); err != nil {
				t.Fatal(err)
			}
			c := turn.ContextBuilt{HistoryTurns: []string{"h1"}, Message: "y?"}
			got, err := newStore(t, s).Resolve(ctx, "h2", c)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.History) != 2 || got.History[1].Text != "¡Hecho! 🙂" || strings.Contains(got.History[0].Text, "SCHEDULE:") ||
				!strings.Contains(got.History[0].Text, "recuérdame") {
				t.Fatalf("history %+v", got.History)
			}
			if _, err := newStore(t, s).Resolve(ctx, "h2", turn.ContextBuilt{HistoryTurns: []string{"missing"}}); err == nil {
				t.Fatal("a history naming a missing turn resolved")
			}
		})
	}
}
