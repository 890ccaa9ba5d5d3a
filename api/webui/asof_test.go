package webui_test

import (
	"context"
	stdhtml "html"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/api/webui"
	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/eventstore/sqlite"
	"github.com/omega-gateway/omega/handlers/asof"
	"github.com/omega-gateway/omega/internal/audittest"
	"github.com/omega-gateway/omega/projections/auditlog"
	"github.com/omega-gateway/omega/projections/readmodel"
)

// pastStates answers a fixed state and keeps the moment it was asked.
type pastStates struct {
	asked []asof.Moment
}

func (p *pastStates) At(_ context.Context, who sender.SenderRef, at asof.Moment) (asof.State, error) {
	p.asked = append(p.asked, at)
	return asof.State{Sender: who.Channel + ":" + who.ID, At: at.At, Known: true, Language: "Spanish", Project: "shop",
		Facts: [][2]string{{"city", "Lisbon"}}, Tasks: []asof.Task{{ID: "task-1", Description: "Call Juan", Kind: "reminder", Due: at.At.Add(time.Hour)}},
		Conversation: &asof.Conversation{ID: "conv-1", LastAt: at.At}, Next: asof.Next{ConversationID: "conv-1"}}, nil
}

// ?at= on the sender page is read in the owner's zone and shows the
// moment's state; a value that is no time is a 400 naming what is
// accepted; without ?at= the present is shown, with the control.
func TestSenderPageAsOf(t *testing.T) {
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "omega.db"), sqlite.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	reg := app.NewRegistry()
	audittest.Project(t, store, readmodel.SQLite, reg, app.Projections()...)
	log, _ := auditlog.New(store.DB())
	ny, _ := time.LoadLocation("America/New_York")
	states := &pastStates{}
	ui, err := webui.New(webui.Options{Audit: log, Log: store, Decoder: reg, Logger: quiet, States: states, Location: ny})
	if err != nil {
		t.Fatal(err)
	}
	get := func(q string) (int, string) {
		req := httptest.NewRequest(http.MethodGet, "/ui/senders/telegram/42"+q, nil)
		req.RemoteAddr = "127.0.0.1:5000"
		rec := httptest.NewRecorder()
		ui.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	code, body := get("?at=2026-11-20T14:00")
	if code != 200 || len(states.asked) != 1 || !states.asked[0].At.Equal(time.Date(2026, 11, 20, 14, 0, 0, 0, ny)) {
		t.Fatalf("%d, asked %v:\n%s", code, states.asked, body)
	}
	for _, want := range []string{`value="2026-11-20T14:00:00"`, "What omega knew at", "2026-11-20 14:00:00 EST", "Lisbon", "Call Juan", "Spanish", "shop", "conv-1"} {
		if !strings.Contains(body, want) {
			t.Errorf("the page as of lacks %q", want)
		}
	}
	// A page in the layout, with the way back, saying what was wrong.
	if code, body := get("?at=last+tuesday"); code != http.StatusBadRequest || !strings.Contains(stdhtml.UnescapeString(body), `at="last tuesday" is not a time`) ||
		!strings.Contains(body, `href="/ui/"`) {
		t.Errorf("a bad moment: %d %s", code, body)
	}
	code, body = get("")
	if code != 200 || len(states.asked) != 1 || !strings.Contains(body, `name="at" value=""`) || strings.Contains(body, "What omega knew at") {
		t.Errorf("the present page: %d, asked %v:\n%s", code, states.asked, body)
	}
}
