package webui_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/omega-gateway/omega/api/webui"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/events"
	"github.com/omega-gateway/omega/domain/markers"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/domain/usage"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/eventstore/sqlite"
	"github.com/omega-gateway/omega/internal/audittest"
	"github.com/omega-gateway/omega/projections"
	"github.com/omega-gateway/omega/projections/auditlog"
	"github.com/omega-gateway/omega/projections/readmodel"
)

// longTurn records a 200-event turn (a long plan: step replies, markers
// and progress messages) and serves the UI over it.
func longTurn(b *testing.B) (http.Handler, string) {
	store, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "omega.db"), sqlite.Options{Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	id := uuid.NewString()
	ps := []domain.Payload{turn.MessageReceived{Channel: "telegram", SenderID: "ana", ChatID: "ana", Text: "do the long thing"},
		turn.ContextBuilt{ConversationID: "c", Model: "opus", SectionsUsed: []string{"identity", "tools"}, System: "system prompt", Prompt: "prompt"}}
	for i := 1; len(ps) < 199; i++ {
		ps = append(ps,
			turn.PlanStepCompleted{Index: i, Text: fmt.Sprintf("step %d", i), Reply: fmt.Sprintf("reply of step %d\nwith a second line", i),
				Usage: &usage.CallUsage{DurationMs: 1200, InputTokens: 900, OutputTokens: 120, UsageReported: true}},
			turn.MarkersApplied{Step: i, Markers: []markers.AppliedMarker{{Name: "REMEMBER", Effect: "recorded"}}},
			turn.PlanProgressSent{Index: i, Text: fmt.Sprintf("step %d done", i)})
	}
	ps = append(ps[:199], turn.TurnCompleted{Status: "ok"})
	evs, err := domain.NewEvents(domain.Metadata{CorrelationID: id, Channel: "telegram", Sender: "ana"}, ps...)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := store.Append(context.Background(), domain.TurnStream(id), eventstore.NoStream, evs...); err != nil {
		b.Fatal(err)
	}
	reg := events.NewRegistry()
	audittest.Project(b, store, readmodel.SQLite, reg, projections.Turns{})
	log, _ := auditlog.New(store.DB())
	ui, err := webui.New(webui.Options{Audit: log, Log: store, Decoder: reg, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	return ui, id
}

// BenchmarkTurnTimeline200 serves the timeline of a 200-event turn: the
// server's share of the page's time to first render.
func BenchmarkTurnTimeline200(b *testing.B) {
	h, id := longTurn(b)
	for b.Loop() {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "/ui/turns/"+id, nil)
		req.RemoteAddr = "127.0.0.1:1234"
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatalf("%d %s", rec.Code, rec.Body.String())
		}
	}
}

// BenchmarkBrowserTimeline200 loads the same page in headless Chromium:
// ns/op is navigation until the last event is visible; fcp-ms is the
// browser's first contentful paint.
func BenchmarkBrowserTimeline200(b *testing.B) {
	h, id := longTurn(b)
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx := browser(b)
	var paints []float64
	for b.Loop() {
		var fcp float64
		err := chromedp.Run(ctx,
			chromedp.Navigate(srv.URL+"/ui/turns/"+id),
			chromedp.WaitVisible(`ol.timeline li:last-child`),
			chromedp.Evaluate(`(performance.getEntriesByName("first-contentful-paint")[0] || {startTime: -1}).startTime`, &fcp),
		)
		if err != nil {
			b.Fatal(err)
		}
		paints = append(paints, fcp)
	}
	slices.Sort(paints)
	b.ReportMetric(paints[len(paints)/2], "fcp-ms")
}
