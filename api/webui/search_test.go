package webui_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/api/webui"
	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/eventstore/sqlite"
	"github.com/omega-gateway/omega/internal/audittest"
	"github.com/omega-gateway/omega/projections/auditlog"
	"github.com/omega-gateway/omega/projections/readmodel"
	"github.com/omega-gateway/omega/projections/recall"
)

type fakeRecall struct{ last *recall.Query }

func (f *fakeRecall) Search(_ context.Context, q recall.Query) ([]recall.Hit, error) {
	f.last = &q
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return []recall.Hit{
		{Chat: "telegram-42", ConversationID: "conv-1", TurnID: "turn-1", Kind: recall.KindUser, At: at, Text: "a <b>greyhound</b>"},
		{Chat: "telegram-42", ConversationID: "conv-2", Kind: recall.KindSummary, At: at, Text: "about dogs"},
	}, nil
}

// The search page searches one person's chats with ?sender=, links each
// passage to its turn (a summary to its conversation's first turn),
// escapes the text, and answers a bad input with 400 without searching.
func TestSearchPage(t *testing.T) {
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "omega.db"), sqlite.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	reg := app.NewRegistry()
	audittest.Project(t, store, readmodel.SQLite, reg, app.Projections()...)
	log, _ := auditlog.New(store.DB())
	f := &fakeRecall{}
	ui, err := webui.New(webui.Options{Audit: log, Log: store, Decoder: reg, Logger: quiet, Recall: f})
	if err != nil {
		t.Fatal(err)
	}
	code, body := getUI(ui, "/ui/search?q=greyhound&sender=telegram:42")
	if code != http.StatusOK || f.last == nil || f.last.Chat != "telegram-42" || f.last.Text != "greyhound" {
		t.Fatalf("search: %d %+v\n%s", code, f.last, body)
	}
	for _, want := range []string{`href="/ui/turns/turn-1"`, `href="/ui/turns/conv-2"`, "a &lt;b&gt;greyhound&lt;/b&gt;", `<form class="search"`,
		"<td>telegram:42</td>"} { // the chat as people write it
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %s:\n%s", want, body)
		}
	}
	for _, bad := range []string{"/ui/search?q=greyhound&sender=nocolon", "/ui/search?q=the+and"} {
		f.last = nil
		if code, body := getUI(ui, bad); code != http.StatusBadRequest || f.last != nil {
			t.Errorf("%s: %d, searched %v\n%s", bad, code, f.last, body)
		}
	}
	if code, body := getUI(ui, "/ui/search?sender=telegram:42"); code != http.StatusOK || f.last != nil || strings.Contains(body, "No passage") ||
		!strings.Contains(body, `name="sender" placeholder="telegram:12345" value="telegram:42"`) {
		t.Errorf("the search page from a sender's page: %d\n%s", code, body)
	}
	if code, body := getUI(ui, "/ui/senders/telegram/42"); code != http.StatusOK || !strings.Contains(body, `href="/ui/search?sender=telegram%3A42"`) {
		t.Errorf("the sender page lacks its search link: %d\n%s", code, body)
	}
}

func getUI(h http.Handler, path string) (int, string) {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.RemoteAddr = "127.0.0.1:5000"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}
