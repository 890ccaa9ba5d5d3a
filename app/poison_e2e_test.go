package app_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/app/config"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/handlers/pipeline"
)

// Turns an old log holds with shapes intake now refuses (a 3,000-byte
// sender id, NUL in the id, name and text), left open by a crash, are
// resumed and completed at start like any other, the read models keep up
// and a rebuild matches them.
func TestOldPoisonShapesAreRecoveredAtStart(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			bin, _ := fakeClaude(t)
			vars := baseVars(t, b, bin)
			cfg, err := config.LoadFrom(vars)
			if err != nil {
				t.Fatal(err)
			}
			a, err := app.Open(ctx, cfg, quiet, app.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, m := range []turn.MessageReceived{
				{SenderID: strings.Repeat("9", 3000), Text: "long sender"},
				{SenderID: "nul\x00id", Text: "nul in id"},
				{SenderID: "bob", SenderName: "B\x00b", Text: "nul in name"},
				{SenderID: "carol", Text: "nul\x00in text"},
				{SenderID: "dave", Text: "plain"},
			} {
				id := uuid.NewString()
				m.Channel, m.ChatID, m.Trusted = "http", m.SenderID, true
				ev, err := domain.NewEventFrom(m, domain.Metadata{CorrelationID: id, Channel: "http", Sender: m.SenderID})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := a.Store.Append(ctx, domain.TurnStream(id), eventstore.NoStream, ev); err != nil {
					t.Fatal(err)
				}
				ids = append(ids, id)
			}
			a.Close()

			n := startNodeWith(t, vars, app.RuntimeOptions{Auth: &pipeline.Auth{}})
			for _, id := range ids {
				waitFor(t, "turn "+id+" to complete", func() bool {
					return countType(turnEvents(t, n, id), "TurnCompleted") == 1
				})
			}
			waitFor(t, "no open turn in the read model", func() bool {
				return queryInt(t, n, "SELECT count(*) FROM turns WHERE status = 'open'") == 0
			})
			waitProjectionsAtHead(t, n)
			diffs, err := n.rt.Engine.Verify(ctx, n.rt.Engine.Projections(), nil)
			if err != nil || len(diffs) != 0 {
				t.Fatalf("verify: %v %v", diffs, err)
			}
		})
	}
}
