package api

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/events"
	"github.com/omega-gateway/omega/domain/system"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/eventstore/sqlite"
	"github.com/omega-gateway/omega/handlers/intake"
)

type recordingChannel struct {
	sent []string
	fail error
}

func (c *recordingChannel) Name() string                                  { return "telegram" }
func (c *recordingChannel) Start(context.Context, channels.Deliver) error { return nil }
func (c *recordingChannel) Stop(context.Context) error                    { return nil }
func (c *recordingChannel) SendTyping(context.Context, string) error      { return nil }
func (c *recordingChannel) SendPhoto(context.Context, string, channels.Attachment, string) error {
	return nil
}
func (c *recordingChannel) SendText(_ context.Context, chat, text string) (channels.SendResult, error) {
	if c.fail != nil {
		return channels.SendResult{}, c.fail
	}
	c.sent = append(c.sent, chat+": "+text)
	return channels.SendResult{Chunks: 1}, nil
}

type channelSet map[string]channels.Channel

func (s channelSet) Channel(name string) (channels.Channel, bool) { ch, ok := s[name]; return ch, ok }

func newServer(t *testing.T, token string) (*Server, *recordingChannel, *httptest.Server) {
	t.Helper()
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "omega.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	reg := events.NewRegistry()
	tg := &recordingChannel{}
	s := &Server{
		Token: token, Store: store, Registry: reg, Channels: channelSet{"telegram": tg},
		Receiver:       mustGateway(t, store),
		DefaultSenders: map[string]string{"telegram": "42"},
		Logger:         slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return s, tg, ts
}

func do(t *testing.T, method, url, token, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func TestBadInputGetsClearErrors(t *testing.T) {
	_, _, ts := newServer(t, "")
	cases := []struct {
		name, method, path, body string
		code                     int
		says                     string
	}{
		{"not JSON", "POST", "/api/messages", `{"sender_id":`, 400, "invalid JSON"},
		{"unknown field", "POST", "/api/messages", `{"sender_id":"a","text":"b","mood":"x"}`, 400, "unknown field"},
		{"no sender", "POST", "/api/messages", `{"text":"hi"}`, 400, "sender_id and text are required"},
		{"blank text", "POST", "/api/messages", `{"sender_id":"a","text":"   "}`, 400, "required"},
		{"bad wait", "POST", "/api/messages?wait=soon", `{"sender_id":"a","text":"hi"}`, 400, "wait must be a duration"},
		{"turn id not a uuid", "GET", "/api/turns/xyz", ``, 400, "UUID"},
		{"unknown turn", "GET", "/api/turns/6f6d6567-612d-7475-726e-000000000099", ``, 404, "no such turn"},
		{"webhook without channel", "POST", "/api/webhook", `{"text":"hi"}`, 400, "channel and text are required"},
		{"webhook unknown channel", "POST", "/api/webhook", `{"channel":"fax","text":"hi"}`, 400, "not running"},
		{"webhook bad mode", "POST", "/api/webhook", `{"channel":"telegram","text":"hi","mode":"loud"}`, 400, "mode must be"},
		{"direct without chat", "POST", "/api/webhook", `{"channel":"telegram","text":"hi"}`, 400, "chat_id is required"},
		{"wrong method", "GET", "/api/messages", ``, 405, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out := do(t, c.method, ts.URL+c.path, "", c.body)
			if code != c.code {
				t.Fatalf("status %d, want %d (%v)", code, c.code, out)
			}
			if c.says != "" && !strings.Contains(out["error"].(string), c.says) {
				t.Fatalf("error %q does not say %q", out["error"], c.says)
			}
		})
	}
}

func TestTokenIsRequiredWhenSet(t *testing.T) {
	_, _, ts := newServer(t, "s3cret")
	if code, _ := do(t, "POST", ts.URL+"/api/messages", "", `{"sender_id":"a","text":"hi"}`); code != 401 {
		t.Fatalf("no token: status %d", code)
	}
	if code, _ := do(t, "POST", ts.URL+"/api/messages", "wrong", `{"sender_id":"a","text":"hi"}`); code != 401 {
		t.Fatalf("wrong token: status %d", code)
	}
	code, out := do(t, "POST", ts.URL+"/api/messages?wait=0s", "s3cret", `{"sender_id":"a","text":"hi","message_id":"m1"}`)
	if code != 202 || out["status"] != "pending" || out["turn_id"] == "" {
		t.Fatalf("with token: %d %v", code, out)
	}
	// The same message_id is the same turn.
	code, again := do(t, "POST", ts.URL+"/api/messages?wait=0s", "s3cret", `{"sender_id":"a","text":"hi","message_id":"m1"}`)
	if code != 202 || again["turn_id"] != out["turn_id"] || again["duplicate"] != true {
		t.Fatalf("repeat: %d %v (first %v)", code, again, out["turn_id"])
	}
}

func TestNoTokenMeansLoopbackOnly(t *testing.T) {
	s, _, _ := newServer(t, "")
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/api/messages", strings.NewReader(`{"sender_id":"a","text":"hi"}`))
	req.RemoteAddr = "192.0.2.7:40000"
	s.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusForbidden {
		t.Fatalf("remote client without token: status %d", rec.Code)
	}
}

func TestWebhookModes(t *testing.T) {
	s, tg, ts := newServer(t, "")
	code, out := do(t, "POST", ts.URL+"/api/webhook", "", `{"mode":"direct","channel":"telegram","chat_id":"7","text":"build green"}`)
	if code != 200 || len(tg.sent) != 1 || tg.sent[0] != "7: build green" {
		t.Fatalf("direct: %d %v %v", code, out, tg.sent)
	}
	evs, err := s.Store.Load(context.Background(), system.WebhookStream(out["id"].(string)), 1)
	if err != nil || len(evs) != 1 || evs[0].Type != "WebhookDelivered" {
		t.Fatalf("direct delivery not recorded: %v %v", evs, err)
	}

	tg.fail = channels.ErrBlocked
	if code, out := do(t, "POST", ts.URL+"/api/webhook", "", `{"channel":"telegram","chat_id":"7","text":"again"}`); code != 502 || !strings.Contains(out["error"].(string), "delivery failed") {
		t.Fatalf("failed direct delivery: %d %v", code, out)
	}

	code, out = do(t, "POST", ts.URL+"/api/webhook", "", `{"mode":"ai","channel":"telegram","text":"summarize the build"}`)
	if code != 202 || out["turn_id"] == "" {
		t.Fatalf("ai: %d %v", code, out)
	}
	evs, err = s.Store.Load(context.Background(), domain.TurnStream(out["turn_id"].(string)), 1)
	if err != nil || len(evs) != 1 {
		t.Fatalf("ai turn: %v %v", evs, err)
	}
	var m turn.MessageReceived
	if err := json.Unmarshal(evs[0].Data, &m); err != nil || m.Channel != "telegram" || m.SenderID != "42" || !m.Trusted {
		t.Fatalf("ai message = %+v, %v", m, err)
	}
}

func mustGateway(t *testing.T, store eventstore.Store) *intake.Gateway {
	t.Helper()
	g, err := intake.NewGateway(store, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return g
}
