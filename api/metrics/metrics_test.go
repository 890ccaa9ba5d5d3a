package metrics_test

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omega-gateway/omega/api/metrics"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/events"
	"github.com/omega-gateway/omega/eventstore/postgres"
	"github.com/omega-gateway/omega/eventstore/sqlite"
	"github.com/omega-gateway/omega/internal/audittest"
	"github.com/omega-gateway/omega/internal/pgtest"
	"github.com/omega-gateway/omega/projections"
	"github.com/omega-gateway/omega/projections/engine"
	"github.com/omega-gateway/omega/projections/readmodel"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

type store interface {
	engine.Log
	DB() *sql.DB
}

func registry() *domain.Registry {
	r := events.NewRegistry()
	return r
}

func newMetrics(t *testing.T, s store, d readmodel.Dialect) (*metrics.Metrics, *engine.Engine) {
	t.Helper()
	eng := engine.New(s.DB(), s, d, registry(), quiet, projections.Turns{})
	if err := eng.Setup(t.Context()); err != nil {
		t.Fatal(err)
	}
	m, err := metrics.New(eng, registry(), quiet)
	if err != nil {
		t.Fatal(err)
	}
	return m, eng
}

func get(t *testing.T, h http.Handler) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	return rec.Code, rec.Body.String()
}

// metricValue returns the sample line's value of name{labels}, or "".
func metricValue(body, series string) string {
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			return v
		}
	}
	return ""
}

// The metrics follow the log: a recorded turn moves the turn, provider and
// token series; the gauges measure open turns and projection lag.
func TestMetricsMoveWhenATurnRuns(t *testing.T) {
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "omega.db"), sqlite.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m, eng := newMetrics(t, s, readmodel.SQLite)
	m.SampleEvery = 0
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = m.Follow(ctx, s, 0) }()
	defer wg.Wait()
	defer cancel()

	_, body := get(t, m.Handler())
	if v := metricValue(body, `omega_turns_total{channel="telegram",status="ok"}`); v != "" {
		t.Fatalf("turns before any turn ran: %q", v)
	}
	turns := audittest.Turns()
	audittest.Append(t, s, turns[0])
	audittest.Append(t, s, turns[4])
	deadline := time.Now().Add(10 * time.Second)
	for metricValue(body, `omega_turns_total{channel="telegram",status="ok"}`) != "1" {
		if time.Now().After(deadline) {
			t.Fatalf("the turn never showed:\n%s", body)
		}
		time.Sleep(20 * time.Millisecond)
		_, body = get(t, m.Handler())
	}
	for series, want := range map[string]string{
		`omega_provider_tokens_total{kind="input",purpose="turn"}`:           "120",
		`omega_provider_tokens_total{kind="cache_read",purpose="turn"}`:      "20",
		`omega_provider_cost_usd_total{purpose="turn"}`:                      "0.01",
		`omega_provider_calls_total{outcome="ok",purpose="turn"}`:            "1",
		`omega_provider_calls_total{outcome="error",purpose="turn"}`:         "1",
		`omega_provider_errors_total{class="unavailable",provider="openai"}`: "1",
		`omega_provider_call_duration_seconds_count{outcome="ok"}`:           "1",
		`omega_turn_duration_seconds_count{channel="telegram"}`:              "1",
	} {
		if got := metricValue(body, series); got != want {
			t.Errorf("%s = %q, want %q", series, got, want)
		}
	}
	if _, body = get(t, m.Handler()); metricValue(body, "omega_projection_lag_events") != "13" || metricValue(body, "omega_projection_lag_seconds") == "0" {
		t.Errorf("before catching up:\n%s", body)
	}
	if err := eng.CatchUp(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, body = get(t, m.Handler()); metricValue(body, "omega_projection_lag_events") != "0" || metricValue(body, "omega_open_turns") != "0" {
		t.Errorf("after catching up:\n%s", body)
	}
}

// /readyz is ready while the database answers and projections keep up,
// and not ready while the database is unreachable (a proxy in front of
// the shared server is stopped) or projections trail too far.
func TestReadyz(t *testing.T) {
	proxy := startProxy(t, "127.0.0.1:5432")
	dsn, err := url.Parse(pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	dsn.Host = proxy.addr
	s, err := postgres.Open(t.Context(), dsn.String(), postgres.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m, eng := newMetrics(t, s, readmodel.Postgres)
	if code, body := get(t, m.Ready()); code != 200 || body != "ready\n" {
		t.Fatalf("ready: %d %q", code, body)
	}

	audittest.Append(t, s, audittest.Turns()[0])
	m.ReadyLag = time.Nanosecond
	// The event is readable once PostgreSQL's visibility horizon passes it.
	deadline := time.Now().Add(10 * time.Second)
	for code, _ := get(t, m.Ready()); code != http.StatusServiceUnavailable; code, _ = get(t, m.Ready()) {
		if time.Now().After(deadline) {
			t.Fatalf("projections behind: %d", code)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := eng.CatchUp(t.Context()); err != nil {
		t.Fatal(err)
	}
	if code, _ := get(t, m.Ready()); code != 200 {
		t.Fatalf("caught up: %d", code)
	}

	proxy.stop()
	code, body := get(t, m.Ready())
	if code != http.StatusServiceUnavailable || body != "not ready\n" {
		t.Fatalf("database unreachable: %d %q", code, body)
	}
}

type tcpProxy struct {
	addr  string
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

// startProxy forwards connections to target until stopped.
func startProxy(t *testing.T, target string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{addr: ln.Addr().String(), ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(up, c); up.Close() }()
			go func() { _, _ = io.Copy(c, up); c.Close() }()
		}
	}()
	t.Cleanup(p.stop)
	return p
}

// stop refuses new connections and cuts the open ones.
func (p *tcpProxy) stop() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}
