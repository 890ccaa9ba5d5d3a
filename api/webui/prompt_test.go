package webui_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omega-gateway/omega/api/webui"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/events"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/eventstore/sqlite"
	"github.com/omega-gateway/omega/handlers/promptstore"
	"github.com/omega-gateway/omega/internal/audittest"
	"github.com/omega-gateway/omega/projections"
	"github.com/omega-gateway/omega/projections/auditlog"
	"github.com/omega-gateway/omega/projections/readmodel"
)

// The turn page shows a prompt recorded by reference in full.
func TestTurnPageShowsThePromptRecordedByReference(t *testing.T) {
	ctx := context.Background()
	reg := events.NewRegistry()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "omega.db"), sqlite.Options{Logger: quiet, Versions: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	texts, err := promptstore.New(store, reg)
	if err != nil {
		t.Fatal(err)
	}
	identity := strings.Repeat("You are omega and you keep every promise. ", 8)
	built := turn.ContextBuilt{ConversationID: "turn-a", Model: "m", Message: "what now", Prompt: "what now",
		System:       identity + "\n\nRespond in English.",
		SystemPieces: []turn.TextPiece{{Text: identity, Stable: true}, {Text: "\n\nRespond in English."}}}
	md := domain.Metadata{CorrelationID: "turn-a", Channel: "terminal", Sender: "ana"}
	ref, err := texts.Record(ctx, built, "what now", md)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := domain.NewEvents(md, turn.MessageReceived{Channel: "terminal", SenderID: "ana", Text: "what now"}, ref)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Append(ctx, domain.TurnStream("turn-a"), eventstore.NoStream, evs...); err != nil {
		t.Fatal(err)
	}
	audittest.Project(t, store, readmodel.SQLite, reg, projections.Turns{})
	log, _ := auditlog.New(store.DB())
	ui, err := webui.New(webui.Options{Audit: log, Log: store, Decoder: reg, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, "/ui/turns/turn-a", nil)
	req.RemoteAddr = "127.0.0.1:5000"
	rec := httptest.NewRecorder()
	ui.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), identity) || !strings.Contains(rec.Body.String(), "Respond in English.") {
		t.Fatalf("%d: the page lacks the system prompt:\n%s", rec.Code, rec.Body.String())
	}
}
