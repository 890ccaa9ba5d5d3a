package webui_test

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/api/webui"
	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/domain/events"
	"github.com/omega-gateway/omega/domain/heartbeat"
	"github.com/omega-gateway/omega/eventstore/sqlite"
	"github.com/omega-gateway/omega/internal/audittest"
	"github.com/omega-gateway/omega/projections"
	"github.com/omega-gateway/omega/projections/auditlog"
	"github.com/omega-gateway/omega/projections/readmodel"
)

func newUI(t *testing.T, token string) *webui.Server {
	t.Helper()
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "omega.db"), sqlite.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	reg := events.NewRegistry()
	audittest.Project(t, store, readmodel.SQLite, reg, projections.Turns{})
	log, _ := auditlog.New(store.DB())
	ui, err := webui.New(webui.Options{Audit: log, Log: store, Decoder: reg, Token: token, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return ui
}

// Without a token only loopback clients get in; with one, a wrong token,
// no cookie or a forged cookie are refused, and the bearer header works.
func TestAuth(t *testing.T) {
	open := newUI(t, "")
	guarded := newUI(t, "s3cret")
	for _, tt := range []struct {
		name   string
		ui     http.Handler
		remote string
		mutate func(*http.Request)
		path   string
		want   int
	}{
		{"loopback, no token configured", open, "127.0.0.1:5000", nil, "/ui/", 200},
		{"remote, no token configured", open, "10.1.2.3:5000", nil, "/ui/", 403},
		{"no credentials", guarded, "127.0.0.1:5000", nil, "/ui/", 401},
		{"wrong token", guarded, "127.0.0.1:5000", nil, "/ui/?token=nope", 401},
		{"right token redirects", guarded, "10.1.2.3:5000", nil, "/ui/?token=s3cret&status=denied", 303},
		{"forged cookie", guarded, "10.1.2.3:5000", func(r *http.Request) { r.AddCookie(&http.Cookie{Name: "omega_ui", Value: "s3cret"}) }, "/ui/", 401},
		{"bearer", guarded, "10.1.2.3:5000", func(r *http.Request) { r.Header.Set("Authorization", "Bearer s3cret") }, "/ui/", 200},
		{"static files are public", guarded, "10.1.2.3:5000", nil, "/ui/static/app.css", 200},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, tt.path, nil)
			req.RemoteAddr = tt.remote
			if tt.mutate != nil {
				tt.mutate(req)
			}
			rec := httptest.NewRecorder()
			tt.ui.ServeHTTP(rec, req)
			if rec.Code != tt.want {
				t.Fatalf("%d, want %d: %s", rec.Code, tt.want, rec.Body.String())
			}
			if tt.want == 303 {
				if loc := rec.Header().Get("Location"); loc != "/ui/?status=denied" {
					t.Fatalf("redirect to %q", loc)
				}
				c := rec.Result().Cookies()
				if len(c) != 1 || !c[0].HttpOnly || c[0].Value == "s3cret" || c[0].SameSite != http.SameSiteStrictMode {
					t.Fatalf("cookie %+v", c)
				}
			}
		})
	}
}

// Shutdown ends the live streams, so a graceful server stop is not held.
func TestShutdownEndsLiveStreams(t *testing.T) {
	ui := newUI(t, "")
	srv := httptest.NewServer(ui)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/ui/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	if line, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(line, "retry:") {
		t.Fatalf("stream start %q %v", line, err)
	}
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		for {
			if _, err := r.ReadString('\n'); err != nil {
				return
			}
		}
	}()
	ui.Shutdown()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the stream did not end")
	}
}

type fixedChecklist heartbeat.Heartbeat

func (c fixedChecklist) Load(context.Context, string) (heartbeat.Heartbeat, error) {
	return heartbeat.Heartbeat(c), nil
}

// The sender page shows the heartbeat checklist the log holds, its
// suppressed sections and interval, and says when the heartbeat is off.
func TestSenderPageHeartbeat(t *testing.T) {
	page := func(t *testing.T, checks webui.Checklists) string {
		t.Helper()
		store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "omega.db"), sqlite.Options{Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Close() })
		reg := app.NewRegistry()
		audittest.Project(t, store, readmodel.SQLite, reg, app.Projections()...)
		log, _ := auditlog.New(store.DB())
		ui, err := webui.New(webui.Options{Audit: log, Log: store, Decoder: reg, Logger: quiet, Checklists: checks})
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest(http.MethodGet, "/ui/senders/telegram/42", nil)
		req.RemoteAddr = "127.0.0.1:5000"
		rec := httptest.NewRecorder()
		ui.ServeHTTP(rec, req)
		if rec.Code != 200 {
			t.Fatalf("%d: %s", rec.Code, rec.Body.String())
		}
		return rec.Body.String()
	}
	on := page(t, fixedChecklist{Items: []string{"Check the backups", "Water the plants"}, Suppressed: []string{"Garden"}, Interval: 45})
	for _, want := range []string{"<li>Check the backups</li>", "<li>Water the plants</li>", "Suppressed sections: Garden", "Every 45 min"} {
		if !strings.Contains(on, want) {
			t.Errorf("sender page lacks %q", want)
		}
	}
	if off := page(t, nil); !strings.Contains(off, "The heartbeat is off.") || strings.Contains(off, "<li>") {
		t.Error("a disabled heartbeat is not shown as off")
	}
}
