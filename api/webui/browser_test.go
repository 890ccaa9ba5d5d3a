package webui_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/omega-gateway/omega/api"
	"github.com/omega-gateway/omega/api/webui"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/events"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/task"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/eventstore/sqlite"
	"github.com/omega-gateway/omega/internal/audittest"
	"github.com/omega-gateway/omega/projections"
	"github.com/omega-gateway/omega/projections/auditlog"
	"github.com/omega-gateway/omega/projections/facts"
	"github.com/omega-gateway/omega/projections/readmodel"
	"github.com/omega-gateway/omega/projections/tasks"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// chromium returns the browser to test with, or skips the test when there
// is none (failing instead under OMEGA_TEST_REQUIRE_BROWSER=1, as in CI).
func chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("OMEGA_TEST_REQUIRE_BROWSER") == "1" {
		t.Fatal("no Chromium found and OMEGA_TEST_REQUIRE_BROWSER=1: apt-get install -y chromium")
	}
	t.Skip("browser test skipped: no Chromium found (apt-get install -y chromium; OMEGA_TEST_REQUIRE_BROWSER=1 makes this fail)")
	return ""
}

// browser starts headless Chromium for one test.
func browser(t testing.TB) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium(t)),
		chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.NoFirstRun, chromedp.WindowSize(1280, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// screenshot saves the page under the test's temp dir (or
// OMEGA_TEST_SCREENSHOTS, to keep them).
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("OMEGA_TEST_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	var png []byte
	if err := chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)); err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

type site struct {
	url   string
	store *sqlite.Store
	turns []audittest.Turn
}

// serve runs the UI over a store holding one turn of each kind, with the
// projections following the log as in omega serve.
func serve(t *testing.T, token string) *site {
	t.Helper()
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "omega.db"), sqlite.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	turns := audittest.Turns()
	for _, turn := range turns {
		audittest.Append(t, store, turn)
	}
	profile, _ := domain.NewEvents(domain.Metadata{Channel: "telegram", Sender: "ana"}, sender.FactRecorded{Key: "city", Value: "Lisbon"})
	tk, _ := domain.NewEvents(domain.Metadata{}, task.TaskScheduled{ID: "abcdef12-0000-4000-8000-000000000001", Description: "Call Juan",
		Due: time.Date(2030, 5, 31, 9, 0, 0, 0, time.UTC), Repeat: task.RepeatMonthly, Kind: task.TaskKindReminder, Channel: "telegram", SenderID: "ana", ChatID: "ana"})
	for stream, evs := range map[string][]domain.NewEvent{sender.SenderStream("telegram", "ana"): profile, task.TaskStream("abcdef12-0000-4000-8000-000000000001"): tk} {
		if _, err := store.Append(t.Context(), stream, eventstore.Any, evs...); err != nil {
			t.Fatal(err)
		}
	}
	reg := events.NewRegistry()
	eng := audittest.Project(t, store, readmodel.SQLite, reg, projections.Turns{}, facts.ReadModel{}, projections.Sessions{}, tasks.ReadModel{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = eng.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	log, err := auditlog.New(store.DB())
	if err != nil {
		t.Fatal(err)
	}
	ui, err := webui.New(webui.Options{Audit: log, Log: store, Decoder: reg, Changed: eng.Applied, Token: token, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	// Mounted on the HTTP channel's handler as omega serve mounts it, so
	// that its path checks and routes are the ones a browser meets.
	api := &api.Server{Token: token, Store: store, Registry: reg, Audit: log, UI: ui, Logger: quiet}
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	return &site{url: srv.URL, store: store, turns: turns}
}

// The audit page lists the turns, and a turn recorded while it is open
// appears without a reload.
func TestBrowserAuditLive(t *testing.T) {
	s := serve(t, "")
	ctx := browser(t)
	var title string
	err := chromedp.Run(ctx,
		chromedp.Navigate(s.url+"/ui/"),
		chromedp.WaitVisible(`#rows tr[data-turn="`+s.turns[0].ID+`"]`),
		chromedp.Title(&title),
		chromedp.Evaluate(`window.__sameDocument = true`, nil),
	)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := chromedp.Run(ctx, chromedp.Evaluate(`document.querySelectorAll("#rows tr[data-turn]").length`, &n)); err != nil || n != len(s.turns) {
		t.Fatalf("%d rows listed (%v), want %d", n, err, len(s.turns))
	}
	screenshot(t, ctx, "audit")

	fresh := audittest.Turns()[0]
	fresh.Text = "a brand new turn, live"
	audittest.Append(t, s.store, fresh)
	var same bool
	var first string
	err = chromedp.Run(ctx,
		chromedp.WaitVisible(`#rows tr[data-turn="`+fresh.ID+`"]`),
		chromedp.Evaluate(`window.__sameDocument === true`, &same),
		chromedp.Text(`#rows tr:first-child td.msg`, &first),
	)
	if err != nil {
		t.Fatalf("the new turn never appeared: %v", err)
	}
	if !same || !strings.Contains(first, "a brand new turn, live") {
		t.Fatalf("reloaded %v, first row %q", !same, first)
	}

	// On a phone.
	if err := chromedp.Run(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Reload(),
		chromedp.WaitVisible(`#rows tr`)); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "audit-phone")
}

// The turn page shows the message, the raw reply and the markers with
// their effects; the sender page shows the sender's turns.
func TestBrowserTurnAndSenderPages(t *testing.T) {
	s := serve(t, "")
	ctx := browser(t)
	var body string
	err := chromedp.Run(ctx,
		chromedp.Navigate(s.url+"/ui/turns/"+s.turns[0].ID),
		chromedp.WaitVisible(`ol.timeline`),
		chromedp.Text(`main`, &body),
	)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"hello, \"world\"", "Sure, \"done\"", "REMEMBER", "recorded fact city=Lisbon",
		"MessageReceived", "ProviderReplied", "120 in / 30 out tokens", "$0.0100", "TurnCompleted", "sent in 1 chunk(s)"} {
		if !strings.Contains(body, want) {
			t.Errorf("turn page lacks %q:\n%s", want, body)
		}
	}
	screenshot(t, ctx, "turn")

	err = chromedp.Run(ctx,
		chromedp.Navigate(s.url+"/ui/senders/telegram/ana"),
		chromedp.WaitVisible(`table.audit`),
		chromedp.Text(`main`, &body),
	)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(body, "plan the week") || !strings.Contains(body, "Lisbon") || !strings.Contains(body, "Call Juan") || !strings.Contains(body, "2030-05-31 09:00:00") {
		t.Errorf("sender page:\n%s", body)
	}
	screenshot(t, ctx, "sender")
}

// With a token: nothing without it; ?token= sets an HttpOnly cookie and
// redirects to the same URL without the token; the cookie then suffices.
func TestBrowserTokenCookie(t *testing.T) {
	s := serve(t, "s3cret")
	resp, err := http.Get(s.url + "/ui/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("without a token: %d", resp.StatusCode)
	}

	ctx := browser(t)
	var loc, body string
	err = chromedp.Run(ctx,
		chromedp.Navigate(s.url+"/ui/?status=denied&token=s3cret"),
		chromedp.WaitVisible(`#rows`),
		chromedp.Location(&loc),
		chromedp.Text(`main`, &body),
	)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(loc, "token") || !strings.HasSuffix(loc, "/ui/?status=denied") || !strings.Contains(body, "let me in") {
		t.Fatalf("after ?token=: at %q showing\n%s", loc, body)
	}
	var cookies []*network.Cookie
	if err := chromedp.Run(ctx, chromedp.ActionFunc(func(ctx context.Context) error {
		var err error
		cookies, err = network.GetCookies().Do(ctx)
		return err
	})); err != nil {
		t.Fatal(err)
	}
	if len(cookies) != 1 || !cookies[0].HTTPOnly || strings.Contains(cookies[0].Value, "s3cret") {
		t.Fatalf("cookies %+v", cookies)
	}
	err = chromedp.Run(ctx,
		chromedp.Navigate(s.url+"/ui/turns/"+s.turns[0].ID),
		chromedp.WaitVisible(`ol.timeline`),
	)
	if err != nil {
		t.Fatalf("the cookie did not let the turn page in: %v", err)
	}

	// A wrong token sets nothing.
	err = chromedp.Run(ctx, network.ClearBrowserCookies(), chromedp.Navigate(s.url+"/ui/?token=wrong"), chromedp.Text(`main`, &body))
	if err != nil || !strings.Contains(body, "Wrong token") {
		t.Fatalf("wrong token: %v %q", err, body)
	}
	screenshot(t, ctx, "signin")
}
