package pipeline_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore/postgres"
	"github.com/omega-gateway/omega/eventstore/sqlite"
	"github.com/omega-gateway/omega/handlers/intake"
	"github.com/omega-gateway/omega/handlers/pipeline"
	"github.com/omega-gateway/omega/handlers/senders"
	"github.com/omega-gateway/omega/internal/pgtest"
	"github.com/omega-gateway/omega/projections"
	"github.com/omega-gateway/omega/projections/engine"
	"github.com/omega-gateway/omega/projections/facts"
	"github.com/omega-gateway/omega/projections/readmodel"
	"github.com/omega-gateway/omega/projections/tasks"
	"github.com/omega-gateway/omega/prompts"
)

type dbStore interface {
	engine.Log
	DB() *sql.DB
}

// TestEventsWrittenByTheGatewayAndDriverCarryTheirSchemaVersion bumps two
// event types the gateway and the driver write (not through Update) to
// schema version 2, with upcasters that would mangle a version-1 payload.
// Events written now must be read back as version 2, untouched: an event
// without its version would be read as 1 and mangled.
func TestEventsWrittenByTheGatewayAndDriverCarryTheirSchemaVersion(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			reg := app.NewRegistry()
			bumpToV2(t, reg, turn.MessageReceived{}, "text")
			bumpToV2(t, reg, turn.TurnCompleted{}, "status")

			var s dbStore
			dialect := readmodel.SQLite
			if backend == "postgres" {
				ps, err := postgres.Open(ctx, pgtest.DSN(t), postgres.Options{Logger: quiet, Versions: reg.Stamps()})
				if err != nil {
					t.Fatal(err)
				}
				s, dialect = ps, readmodel.Postgres
			} else {
				ss, err := sqlite.Open(ctx, filepath.Join(dir, "omega.db"), sqlite.Options{Logger: quiet, Versions: reg.Stamps()})
				if err != nil {
					t.Fatal(err)
				}
				s = ss
			}
			t.Cleanup(func() { s.Close() })
			engine := engine.New(s.DB(), s, dialect, reg, quiet, facts.ReadModel{}, projections.Turns{}, projections.Sessions{}, tasks.ReadModel{})
			if err := engine.Setup(ctx); err != nil {
				t.Fatal(err)
			}
			ps, err := prompts.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			driver := &pipeline.Driver{
				Store: s, Registry: reg,
				Senders:  senders.MustNew(s, reg),
				Read:     queries(t, s.DB(), dialect),
				Channels: &fakeChannel{}, Provider: &fakeProvider{}, Prompts: ps,
				Config: pipeline.DriverConfig{
					ModelFast: "fast", Workspace: dir, ConversationIdle: time.Hour, Location: time.UTC, HistoryLimit: 10,
				},
				Logger: quiet,
			}
			gw, err := intake.NewGateway(s, filepath.Join(dir, "inbox"), func(string, string) {})
			if err != nil {
				t.Fatal(err)
			}
			tn, err := gw.Receive(ctx, channels.Incoming{Channel: chanName, SenderID: senderID, ChatID: "chat-1", Text: "hola", PlatformID: "m1"})
			if err != nil {
				t.Fatal(err)
			}
			if err := driver.Run(ctx, tn); err != nil {
				t.Fatal(err)
			}

			evs, err := s.Load(ctx, domain.TurnStream(tn), 1)
			if err != nil {
				t.Fatal(err)
			}
			var seen int
			for _, e := range evs {
				// Version 1 is written as none, which reads as 1.
				if want := reg.SchemaVersion(e.Type); max(e.Metadata.SchemaVersion, 1) != want || want == 1 && e.Metadata.SchemaVersion != 0 {
					t.Errorf("%s written at schema version %d, want %d", e.Type, e.Metadata.SchemaVersion, want)
				}
				p, err := reg.Decode(e)
				if err != nil {
					t.Fatal(err)
				}
				switch p := p.(type) {
				case turn.MessageReceived:
					seen++
					if p.Text != "hola" {
						t.Errorf("MessageReceived read back as %q: upcast as if it were version 1", p.Text)
					}
				case turn.TurnCompleted:
					seen++
					if p.Status == mangled {
						t.Errorf("TurnCompleted read back upcast as if it were version 1")
					}
				}
			}
			if seen != 2 {
				t.Fatalf("saw %d of MessageReceived and TurnCompleted in %d events", seen, len(evs))
			}
		})
	}
}

const mangled = "mangled-by-upcaster"

// bumpToV2 registers p at schema version 2 with an upcaster that
// overwrites field, so that a wrongly upcast event is visible.
func bumpToV2(t *testing.T, reg *domain.Registry, p domain.Payload, field string) {
	t.Helper()
	reg.Register(p, 2)
	err := reg.RegisterUpcaster(p.EventType(), 1, func(data json.RawMessage) (json.RawMessage, error) {
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, err
		}
		m[field] = mangled
		return json.Marshal(m)
	})
	if err != nil {
		t.Fatal(err)
	}
}
