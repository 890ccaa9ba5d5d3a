package webui_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/omega-gateway/omega/api"
	"github.com/omega-gateway/omega/api/webui"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/events"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/eventstore/sqlite"
	"github.com/omega-gateway/omega/internal/audittest"
	"github.com/omega-gateway/omega/internal/live"
	"github.com/omega-gateway/omega/projections"
	"github.com/omega-gateway/omega/projections/auditlog"
	"github.com/omega-gateway/omega/projections/readmodel"
)

// liveSite serves the UI on the HTTP channel with a live hub, and one
// running turn.
func liveSite(t *testing.T, token string) (url, id string, hub *live.Hub) {
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "omega.db"), sqlite.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	reg := events.NewRegistry()
	audittest.Project(t, store, readmodel.SQLite, reg, projections.Turns{})
	log, err := auditlog.New(store.DB())
	if err != nil {
		t.Fatal(err)
	}
	hub = live.NewHub(0)
	srv := &api.Server{Token: token, Store: store, Registry: reg, Audit: log, Live: hub, Logger: quiet}
	ui, err := webui.New(webui.Options{Audit: log, Log: store, Decoder: reg, Logger: quiet, Token: token, Stream: http.HandlerFunc(srv.StreamTurn)})
	if err != nil {
		t.Fatal(err)
	}
	srv.UI = ui
	web := httptest.NewServer(srv.Handler())
	t.Cleanup(web.Close)

	id = uuid.NewString()
	evs, _ := domain.NewEvents(domain.Metadata{Channel: "telegram", Sender: "ana"},
		turn.MessageReceived{Channel: "telegram", SenderID: "ana", ChatID: "ana", Text: "tell me a story", ReceivedAt: time.Now()})
	if _, err := store.Append(t.Context(), domain.TurnStream(id), eventstore.NoStream, evs...); err != nil {
		t.Fatal(err)
	}
	return web.URL, id, hub
}

// A running turn's page links its event stream, which is behind the UI's
// own sign-in and starts with the reply so far.
func TestRunningTurnPageFollowsTheStream(t *testing.T) {
	url, id, hub := liveSite(t, "s3cret")
	hub.Publish(id, "Once upon a time", "")
	get := func(path string, signedIn bool) *http.Response {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url+path, nil)
		if signedIn {
			req.Header.Set("Authorization", "Bearer s3cret")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	denied := get("/ui/turns/"+id+"/stream", false)
	defer denied.Body.Close()
	if denied.StatusCode != http.StatusUnauthorized {
		t.Errorf("stream without sign-in answered %s", denied.Status)
	}
	pageResp := get("/ui/turns/"+id, true)
	defer pageResp.Body.Close()
	page, _ := io.ReadAll(pageResp.Body)
	if !strings.Contains(string(page), `data-stream="/ui/turns/`+id+`/stream"`) {
		t.Errorf("the running turn's page does not follow its stream:\n%s", page)
	}
	resp := get("/ui/turns/"+id+"/stream", true)
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	var lines []string
	for sc.Scan() && sc.Text() != "" {
		lines = append(lines, sc.Text())
	}
	if len(lines) != 2 || lines[0] != "event: text" || lines[1] != `data: {"text":"Once upon a time"}` {
		t.Errorf("stream began with %q, want the reply so far", lines)
	}
}

// A running turn's page shows its reply while it is written.
func TestBrowserRunningTurnShowsTheReplyLive(t *testing.T) {
	url, id, hub := liveSite(t, "")
	ctx := browser(t)
	if err := chromedp.Run(ctx, chromedp.Navigate(url+"/ui/turns/"+id), chromedp.WaitVisible(`#live-reply`),
		chromedp.Poll(`document.querySelector("#live-reply .live-state").textContent === "live"`, nil)); err != nil {
		t.Fatal(err)
	}
	hub.Publish(id, "Once upon a time", "Reading notes.md…")
	var text, activity string
	err := chromedp.Run(ctx,
		chromedp.Poll(`document.querySelector("#live-reply .live-text").textContent === "Once upon a time"`, nil),
		chromedp.Text(`#live-reply .live-activity`, &activity),
	)
	if err != nil {
		t.Fatalf("the reply so far never showed: %v", err)
	}
	hub.Publish(id, "Once upon a time, there was a gateway.", "")
	if err := chromedp.Run(ctx,
		chromedp.Poll(`document.querySelector("#live-reply .live-text").textContent.endsWith("gateway.")`, nil),
		chromedp.Text(`#live-reply .live-text`, &text)); err != nil {
		t.Fatalf("the reply did not grow: %v", err)
	}
	if activity != "Reading notes.md…" || text != "Once upon a time, there was a gateway." {
		t.Errorf("shown %q with activity %q", text, activity)
	}
	screenshot(t, ctx, "turn-live")
}
