package api

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/events"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/internal/teststores"
)

func serverOn(t *testing.T, store eventstore.Store, token string) *Server {
	reg := events.NewRegistry()
	return &Server{
		Token: token, Store: store, Registry: reg, Channels: channelSet{"telegram": &recordingChannel{}},
		Receiver: mustGateway(t, store),
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
}

// The messages that once stopped every read model on PostgreSQL are
// refused at intake with a 400 naming the field, and nothing is recorded.
func TestPoisonShapesAreRefusedAtIntake(t *testing.T) {
	long := strings.Repeat("9", 2800)
	cases := []struct {
		name, body, field string
	}{
		{"long sender id", `{"sender_id":"` + long + `","text":"hi"}`, "sender_id"},
		{"NUL in sender id", `{"sender_id":"a\u0000b","text":"hi"}`, "sender_id"},
		{"control in sender id", `{"sender_id":"a\u001bb","text":"hi"}`, "sender_id"},
		{"NUL in text", `{"sender_id":"a","text":"hi\u0000there"}`, "text"},
		{"long message id", `{"sender_id":"a","text":"hi","message_id":"` + long + `"}`, "message_id"},
		{"webhook long sender", `{"mode":"ai","channel":"telegram","sender_id":"` + long + `","text":"hi"}`, "sender_id"},
		{"webhook NUL chat", `{"mode":"ai","channel":"telegram","sender_id":"1","chat_id":"\u0000","text":"hi"}`, "chat_id"},
	}
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			store := b.Open(t)
			ts := httptest.NewServer(serverOn(t, store, "").Handler())
			t.Cleanup(ts.Close)
			for _, c := range cases {
				path := "/api/messages"
				if strings.HasPrefix(c.name, "webhook") {
					path = "/api/webhook"
				}
				code, out := do(t, "POST", ts.URL+path, "", c.body)
				if msg, _ := out["error"].(string); code != 400 || !strings.Contains(msg, c.field) {
					t.Errorf("%s: %d %v, want 400 naming %s", c.name, code, out, c.field)
				}
			}
			evs, err := store.ReadAll(context.Background(), 0, 10)
			if err != nil || len(evs) != 0 {
				t.Fatalf("recorded %d event(s) (err %v), want none", len(evs), err)
			}
			// A NUL in the display name is cleaned, not refused.
			code, out := do(t, "POST", ts.URL+"/api/messages", "", `{"sender_id":"a","sender_name":"A\u0000da","text":"hi"}`)
			if code != 202 {
				t.Fatalf("NUL in name: %d %v", code, out)
			}
			evs, err = store.Load(context.Background(), domain.TurnStream(out["turn_id"].(string)), 1)
			if err != nil || len(evs) != 1 || !strings.Contains(string(evs[0].Data), `"sender_name":"A da"`) {
				t.Fatalf("recorded %v, err %v", evs, err)
			}
		})
	}
}

func TestHTTPEdges(t *testing.T) {
	s, _, ts := newServer(t, "s3cret")
	s.MaxBody = 512
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	ok := `{"sender_id":"a","text":"hi"}`
	cases := []struct {
		name, method, path, auth, body string
		code                           int
		says                           string
	}{
		{"one value", "POST", "/api/messages?wait=0s", "Bearer s3cret", ok, 202, ""},
		{"trailing garbage", "POST", "/api/messages", "Bearer s3cret", ok + ` x`, 400, "after the JSON value"},
		{"second object", "POST", "/api/messages", "Bearer s3cret", ok + ok, 400, "after the JSON value"},
		{"trailing space is fine", "POST", "/api/messages?wait=0s", "Bearer s3cret", ok + " \n", 202, ""},
		{"body too large", "POST", "/api/messages", "Bearer s3cret", `{"sender_id":"a","text":"` + strings.Repeat("x", 600) + `"}`, 413, "larger than 512"},
		{"lower-case scheme", "POST", "/api/messages?wait=0s", "bearer s3cret", ok, 202, ""},
		{"upper-case scheme", "POST", "/api/messages?wait=0s", "BEARER  s3cret", ok, 202, ""},
		{"other scheme", "POST", "/api/messages", "Basic s3cret", ok, 401, "bearer token"},
		{"scheme only", "POST", "/api/messages", "Bearer", ok, 401, "bearer token"},
		{"dot segments", "GET", "/api/turns/../../x", "Bearer s3cret", "", 404, "no such endpoint"},
		{"dot segment to a route", "POST", "/api/x/../messages", "Bearer s3cret", ok, 404, "no such endpoint"},
		{"encoded dot segments", "GET", "/api/turns/%2e%2e/%2e%2e/x", "Bearer s3cret", "", 404, "no such endpoint"},
		{"double slash", "POST", "//api/messages", "Bearer s3cret", ok, 404, "no such endpoint"},
		{"unknown path", "GET", "/api/nothing", "Bearer s3cret", "", 404, ""},
		{"NUL in text", "POST", "/api/messages", "Bearer s3cret", `{"sender_id":"a","text":"\u0000"}`, 400, "NUL"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest(c.method, ts.URL+c.path, strings.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", c.auth)
			resp, err := noRedirect.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != c.code || !strings.Contains(string(body), c.says) {
				t.Fatalf("%d %s, want %d saying %q", resp.StatusCode, body, c.code, c.says)
			}
		})
	}
}

// A client that trickles its headers or body, or keeps an idle
// connection, is cut off by the server's timeouts.
func TestSlowClientsAreCutOff(t *testing.T) {
	s, _, _ := newServer(t, "")
	s.Addr = "127.0.0.1:0"
	s.ReadHeaderTimeout, s.ReadTimeout, s.IdleTimeout = 200*time.Millisecond, 300*time.Millisecond, 300*time.Millisecond
	addr := serveOnLoopback(t, s)

	cases := []struct{ name, send string }{
		{"slow headers", "POST /api/messages HTTP/1.1\r\nHost: x\r\n"},
		{"slow body", "POST /api/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"sender_id\":"},
		{"idle", "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr.String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := io.WriteString(conn, c.send); err != nil {
				t.Fatal(err)
			}
			// Our own deadline only keeps a failing test from hanging: the
			// server must close the connection well before it.
			if err := conn.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err = io.Copy(io.Discard, bufio.NewReader(conn))
			if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
				t.Fatalf("connection still open after %v", time.Since(start))
			}
		})
	}
}

// serveOnLoopback listens on s.Addr and serves until the test ends.
func serveOnLoopback(t *testing.T, s *Server) net.Addr {
	t.Helper()
	addr, err := s.Listen()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := s.Start(ctx, nil); err != nil && ctx.Err() == nil {
			t.Error(err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return addr
}
