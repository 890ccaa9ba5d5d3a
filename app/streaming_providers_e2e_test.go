package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omega-gateway/omega/api"
	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/markers"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/providers/providertest"
)

// streamedReply has a marker line in its middle: the marker must never
// reach the screen, not even for one preview.
const streamedReply = "Sure, here is what you asked for, written out in a few plain words.\n" +
	"LANG_SWITCH: de\n" +
	"And this is the rest of the answer, which ends right here."

// heldAt is where a held model stops writing: right after the delta that
// starts the marker, so the test sees what is shown while the marker is
// in progress.
const heldAt = "LANG_SWITCH"

// modelHold holds a streaming model mid-reply once armed: after the
// delta with heldAt it waits until released. Files, so that a fake claude
// script honours it as well as a fake server.
type modelHold struct{ dir string }

func newModelHold(t *testing.T) modelHold { return modelHold{dir: t.TempDir()} }

func (h modelHold) arm(t *testing.T)     { h.touch(t, "armed") }
func (h modelHold) release(t *testing.T) { h.touch(t, "released") }

func (h modelHold) touch(t *testing.T, name string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(h.dir, name), nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

func (h modelHold) has(name string) bool {
	_, err := os.Stat(filepath.Join(h.dir, name))
	return err == nil
}

// wait blocks while the hold is armed and not released.
func (h modelHold) wait(ctx context.Context) {
	for h.has("armed") && !h.has("released") {
		select {
		case <-ctx.Done():
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// heldWriter passes a fake server's stream through, and once a write with
// heldAt went out, holds at the flush that sends it.
type heldWriter struct {
	http.ResponseWriter
	ctx  context.Context
	hold modelHold
	seen bool
}

func (w *heldWriter) Write(p []byte) (int, error) {
	w.seen = w.seen || bytes.Contains(p, []byte(heldAt))
	return w.ResponseWriter.Write(p)
}

func (w *heldWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
	if w.seen {
		w.hold.wait(w.ctx)
	}
}

// heldServer serves a fake model server's handler with the hold applied.
func heldServer(t *testing.T, upstream http.Handler, hold modelHold) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		upstream.ServeHTTP(&heldWriter{ResponseWriter: w, ctx: r.Context(), hold: hold}, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// pausingClaude is a fake claude that streams plan as stream-json, holding
// after the line with heldAt while hold is armed.
func pausingClaude(t *testing.T, plan providertest.StreamPlan, hold modelHold) string {
	body := providertest.ClaudeStream(plan, "sess-stream")
	return providertest.FakeClaude(t, `cat >/dev/null
reply() {
`+body+`
}
reply | while IFS= read -r line; do
	printf '%s\n' "$line"
	case "$line" in *`+heldAt+`*) seen=1;; esac
	if [ -n "$seen" ] && [ -f "`+hold.dir+`/armed" ]; then
		while [ ! -f "`+hold.dir+`/released" ]; do sleep 0.01; done
	fi
done
`)
}

// streamingProvider configures a node for one real provider over its
// streaming double, as a person would with OMEGA_ variables.
type streamingProvider struct {
	name      string
	configure func(t *testing.T, vars map[string]string, plan providertest.StreamPlan, hold modelHold)
}

func streamingProviders() []streamingProvider {
	return []streamingProvider{
		{"claude-code", func(t *testing.T, vars map[string]string, plan providertest.StreamPlan, hold modelHold) {
			vars["OMEGA_PROVIDER"], vars["OMEGA_CLAUDE_BIN"] = "claude-code", pausingClaude(t, plan, hold)
		}},
		{"anthropic", func(t *testing.T, vars map[string]string, plan providertest.StreamPlan, hold modelHold) {
			up := providertest.StreamingAnthropic(t, plan)
			vars["OMEGA_PROVIDER"], vars["OMEGA_ANTHROPIC_API_KEY"] = "anthropic", "test-key"
			vars["OMEGA_ANTHROPIC_BASE_URL"] = heldServer(t, up.Config.Handler, hold)
		}},
		{"openai", func(t *testing.T, vars map[string]string, plan providertest.StreamPlan, hold modelHold) {
			up := providertest.StreamingOpenAI(t, plan)
			vars["OMEGA_PROVIDER"] = "openai"
			vars["OMEGA_OPENAI_BASE_URL"] = heldServer(t, up.Config.Handler, hold)
		}},
	}
}

// TestStreamedRepliesThroughEachRealProvider: with each provider as a
// person configures it, the model is held in the middle of writing the
// marker line after the reply's first line. A client on the turn's event
// stream, and a Telegram private chat's draft, show that first line then,
// never the marker, and then the whole reply without the marker (on
// Telegram as one message); the turn records one stream start and the
// provider's usage.
func TestStreamedRepliesThroughEachRealProvider(t *testing.T) {
	plan := providertest.StreamPlan{Every: 5 * time.Millisecond, Text: streamedReply}
	want := markers.Parse(streamedReply).Text
	if strings.Contains(want, heldAt) || want == streamedReply {
		t.Fatalf("the marker is not stripped from the plan's reply: %q", want)
	}
	doors := []struct {
		name string
		run  func(t *testing.T, vars map[string]string, hold modelHold, want string)
	}{{"http", streamOverHTTP}, {"telegram", streamOverTelegram}}
	for _, p := range streamingProviders() {
		for _, door := range doors {
			for _, b := range backends() {
				t.Run(p.name+"/"+door.name+"/"+b.name, func(t *testing.T) {
					hold := newModelHold(t)
					vars := baseVars(t, b, "")
					vars["OMEGA_PROVIDER_MAX_RETRIES"] = "0"
					p.configure(t, vars, plan, hold)
					door.run(t, vars, hold, want)
				})
			}
		}
	}
}

func streamOverHTTP(t *testing.T, vars map[string]string, hold modelHold, want string) {
	n := startNodeWith(t, vars, app.RuntimeOptions{})
	say(t, n, "owner", "hello", "30s") // the welcome is not what is measured
	hold.arm(t)
	id := postTurn(t, n, "owner", "tell me something")
	got := followHeld(t, n, id, hold, firstLine(want))
	checkStreamEvents(t, got, want)
	checkStreamedTurnLog(t, n.rt, id)
}

func streamOverTelegram(t *testing.T, vars map[string]string, hold modelHold, want string) {
	api := telegramtest.New(t, tgToken)
	n := startTelegramNode(t, telegramVars(vars, api, "42"))
	tgSay(t, n, api, tgUser, tgUser, "hello") // the welcome is not what is measured
	before := len(api.VisibleMessages(tgUser))
	hold.arm(t)
	tn := tgTurnID(tgUser, api.PushText(tgUser, tgUser, "tell me something"))
	waitFor(t, "a draft with the first line while the model is held", func() bool {
		d := api.Drafts(tgUser)
		return len(d) > 0 && len(d[len(d)-1].Text) >= len(firstLine(want))
	})
	hold.release(t)
	n.waitTurn(t, tn)

	for _, d := range api.Drafts(tgUser) {
		if strings.Contains(d.Text, heldAt) || !strings.HasPrefix(want, d.Text) {
			t.Errorf("draft %q is not a start of the reply %q", d.Text, want)
		}
	}
	visible := api.VisibleMessages(tgUser)
	if len(visible) != before+1 || visible[len(visible)-1].Text != want {
		t.Errorf("%d messages after the reply, want one more (%d) showing %q: %+v", len(visible), before+1, want, visible[before:])
	}
	checkStreamedTurnLog(t, n.rt, tn)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// followHeld reads the turn's event stream, releasing the held model once
// a text event shows as much as shown (all that may be shown while the
// model is held).
func followHeld(t *testing.T, n *node, id string, hold modelHold, shown string) []sseEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	events := make(chan sseEvent, 64)
	errc := make(chan error, 1)
	go func() { errc <- readStream(ctx, n.url+"/api/turns/"+id+"/stream", events) }()
	var got []sseEvent
	var once sync.Once
	for ev := range events {
		got = append(got, ev)
		var te struct{ Text string }
		if ev.Name == "text" && json.Unmarshal([]byte(ev.Data), &te) == nil && len(te.Text) >= len(shown) {
			once.Do(func() { hold.release(t) })
		}
	}
	if err := <-errc; err != nil {
		t.Fatalf("%v (the text before the marker was not shown while the model was held); events %+v", err, got)
	}
	return got
}

func checkStreamEvents(t *testing.T, got []sseEvent, want string) {
	t.Helper()
	if len(got) < 2 || got[0].Name != "text" || got[len(got)-1].Name != "final" {
		t.Fatalf("events %+v, want text before the final", got)
	}
	for _, ev := range got {
		if strings.Contains(ev.Data, "LANG_SWITCH") {
			t.Errorf("event %s shows the marker: %s", ev.Name, ev.Data)
		}
		if ev.Name != "text" {
			continue
		}
		var te struct{ Text string }
		if err := json.Unmarshal([]byte(ev.Data), &te); err != nil || te.Text == "" || !strings.HasPrefix(want, te.Text) {
			t.Errorf("text event %s is not a start of the reply %q", ev.Data, want)
		}
	}
	var final api.TurnOut
	if err := json.Unmarshal([]byte(got[len(got)-1].Data), &final); err != nil {
		t.Fatal(err)
	}
	if final.Reply != want || final.Status != turn.StatusOK {
		t.Errorf("final %s %q, want ok %q", final.Status, final.Reply, want)
	}
}

func checkStreamedTurnLog(t *testing.T, rt *app.Runtime, id string) {
	t.Helper()
	evs, err := rt.Store.Load(context.Background(), domain.TurnStream(id), 1)
	if err != nil {
		t.Fatal(err)
	}
	if c := countType(evs, turn.ReplyStreamStarted{}.EventType()); c != 1 {
		t.Errorf("%d ReplyStreamStarted recorded, want 1", c)
	}
	var replied []turn.ProviderReplied
	for _, e := range evs {
		if e.Type != (turn.ProviderReplied{}).EventType() {
			continue
		}
		p, err := rt.Registry.Decode(e)
		if err != nil {
			t.Fatal(err)
		}
		replied = append(replied, p.(turn.ProviderReplied))
	}
	if len(replied) != 1 {
		t.Fatalf("%d ProviderReplied recorded, want 1", len(replied))
	}
	r := replied[0]
	if !r.UsageReported || r.InputTokens != providertest.PromptTokens || r.OutputTokens == 0 {
		t.Errorf("usage %+v, want reported with %d tokens in and some out", r, providertest.PromptTokens)
	}
	if r.Text != streamedReply {
		t.Errorf("recorded raw reply %q, want %q", r.Text, streamedReply)
	}
}
