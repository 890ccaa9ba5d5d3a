package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omega-gateway/omega/api"
	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/app/config"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/handlers/pipeline"
	"github.com/omega-gateway/omega/internal/pgtest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// client fails a hung request instead of hanging the test.
var client = &http.Client{Timeout: 60 * time.Second}

// writeClaude writes a Claude Code double: a shell script that reads the
// prompt from stdin and the --resume session into $prompt and $resume and the prompt's
// last line (without a "[User]: " prefix) into $last, then runs body,
// which prints Claude Code's JSON result.
func writeClaude(t *testing.T, dir, body string) string {
	t.Helper()
	bin := filepath.Join(dir, "claude")
	script := `#!/bin/sh
prompt=""; resume=""
while [ $# -gt 0 ]; do
  case "$1" in
    --resume) resume="$2"; shift 2;;
    *) shift;;
  esac
done
prompt=$(cat)
last=$(printf '%s' "$prompt" | tail -n 1 | tr -d '"\\' | sed 's/^\[User\]: //')
` + body
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// fakeClaude writes a Claude Code double that answers "echo: <last line>",
// keeps the session it was asked to resume (or starts sess-<n>), sleeps
// when the prompt contains "slow", and logs one line per call:
// "<resume or -> <prompt bytes> <last line>".
func fakeClaude(t *testing.T) (bin, callLog string) {
	t.Helper()
	dir := t.TempDir()
	callLog = filepath.Join(dir, "calls.log")
	bin = writeClaude(t, dir, `case "$prompt" in *slow*) sleep 0.3;; esac
echo "${resume:--} ${#prompt} $last" >> "`+callLog+`"
sess=${resume:-sess-$(date +%s%N)}
printf '{"type":"result","subtype":"success","is_error":false,"result":"echo: %s","session_id":"%s","num_turns":1,"usage":{"input_tokens":10,"output_tokens":5}}\n' "$last" "$sess"
`)
	return bin, callLog
}

type backend struct {
	name string
	env  func(t *testing.T) map[string]string // extra configuration
}

func backends() []backend {
	return []backend{
		{"sqlite", func(*testing.T) map[string]string { return map[string]string{} }},
		{"postgres", func(t *testing.T) map[string]string {
			return map[string]string{"OMEGA_DATABASE_URL": pgtest.DSN(t)}
		}},
	}
}

// fakeChannel is a platform double with an allowlist of its own.
type fakeChannel struct {
	name string
	mu   sync.Mutex
	sent map[string][]string // chat -> texts
}

func (f *fakeChannel) Name() string { return f.name }
func (f *fakeChannel) Start(ctx context.Context, _ channels.Deliver) error {
	<-ctx.Done()
	return nil
}
func (f *fakeChannel) SendText(_ context.Context, chat, text string) (channels.SendResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.sent == nil {
		f.sent = map[string][]string{}
	}
	f.sent[chat] = append(f.sent[chat], text)
	return channels.SendResult{Chunks: 1, PlatformIDs: []string{fmt.Sprint(len(f.sent[chat]))}}, nil
}
func (f *fakeChannel) SendTyping(context.Context, string) error { return nil }
func (f *fakeChannel) SendPhoto(context.Context, string, channels.Attachment, string) error {
	return nil
}
func (f *fakeChannel) Stop(context.Context) error { return nil }
func (f *fakeChannel) texts(chat string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.sent[chat]...)
}

// node is one running omega process (in-process) with its HTTP channel.
type node struct {
	rt   *app.Runtime
	url  string
	stop func()
}

func startNode(t *testing.T, vars map[string]string, extra ...channels.Channel) *node {
	t.Helper()
	auth := &pipeline.Auth{Allowed: map[string][]string{"testchat": {"allowed"}}}
	return startNodeWith(t, vars, app.RuntimeOptions{Channels: extra, Auth: auth})
}

// startNodeWith starts a node whose HTTP channel comes first, beside the
// options' channels.
func startNodeWith(t testing.TB, vars map[string]string, opts app.RuntimeOptions) *node {
	t.Helper()
	cfg, err := config.LoadFrom(vars)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.Open(ctx, cfg, quiet, app.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv := &api.Server{Addr: "127.0.0.1:0", Logger: quiet}
	addr, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	opts.Channels = append([]channels.Channel{srv}, opts.Channels...)
	rt, err := a.NewRuntime(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	srv.Receiver, srv.Store, srv.Registry, srv.Channels, srv.Live = rt.Gateway, a.Store, a.Registry, rt, rt.Live
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := rt.Run(ctx); err != nil {
			t.Errorf("runtime: %v", err)
		}
	}()
	n := &node{rt: rt, url: "http://" + addr.String()}
	var once sync.Once
	n.stop = func() {
		once.Do(func() {
			cancel()
			<-done
			a.Close()
		})
	}
	t.Cleanup(n.stop)
	return n
}

// baseVars is a node's configuration. Classification is off: it adds a
// provider call per turn, and the tests that want it turn it on.
func baseVars(t *testing.T, b backend, claude string) map[string]string {
	vars := map[string]string{
		"OMEGA_DATA_DIR":     t.TempDir(),
		"OMEGA_CLAUDE_BIN":   claude,
		"OMEGA_LEASE_TTL":    "2s",
		"OMEGA_STATUS_FIRST": "0s",
		"OMEGA_CLASSIFY":     "false",
		"HOME":               t.TempDir(),
		"PATH":               os.Getenv("PATH"),
	}
	for k, v := range b.env(t) {
		vars[k] = v
	}
	return vars
}

func post(t *testing.T, url string, body any) api.TurnOut {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := client.Post(url, "application/json", bytes.NewReader(b))
	return decodeTurn(t, url, resp, err)
}

func get(t *testing.T, url string) api.TurnOut {
	t.Helper()
	resp, err := client.Get(url)
	return decodeTurn(t, url, resp, err)
}

func decodeTurn(t *testing.T, url string, resp *http.Response, err error) api.TurnOut {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out api.TurnOut
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("decode reply of %s: %v", url, err)
	}
	return out
}

func say(t *testing.T, n *node, sender, text, wait string) api.TurnOut {
	t.Helper()
	return post(t, n.url+"/api/messages?wait="+wait, map[string]string{"sender_id": sender, "text": text})
}

// turnEvents loads a turn's events and decodes them.
func turnEvents(t *testing.T, n *node, id string) []domain.Event {
	t.Helper()
	evs, err := n.rt.Store.Load(context.Background(), domain.TurnStream(id), 1)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// completed is the type of a turn's last event.
var completed = turn.TurnCompleted{}.EventType()

func countType(evs []domain.Event, typ string) int {
	n := 0
	for _, e := range evs {
		if e.Type == typ {
			n++
		}
	}
	return n
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	waitForWithin(t, what, 30*time.Second, cond)
}

// waitForWithin is waitFor with its own bound, for conditions that take
// many clock periods (a loaded CI machine stretches each of them).
func waitForWithin(t *testing.T, what string, bound time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func calls(t *testing.T, path string) []string {
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

func queryInt(t *testing.T, n *node, q string, args ...any) int {
	t.Helper()
	var v int
	if err := n.rt.DBForTests().QueryRow(q, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return v
}
