package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/app/config"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/terminal"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/promptctx"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/internal/pgtest"
	"github.com/omega-gateway/omega/prompts"
	"github.com/omega-gateway/omega/providers"
)

// quoteProvider answers each message by quoting it, at once.
type quoteProvider struct{}

func (quoteProvider) Name() string { return "quote" }
func (quoteProvider) Complete(_ context.Context, req providers.Request) (providers.Response, error) {
	return providers.Response{Text: "you asked: " + req.Prompt, Model: req.Model}, nil
}

// chatTurns runs lines as terminal turns of sender "tester" until all are
// answered.
func chatTurns(t *testing.T, lines ...string) {
	t.Helper()
	cfg, err := config.Load()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a, err := app.Open(ctx, cfg, slog.New(slog.DiscardHandler), app.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	in, feed, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	go func() {
		_, _ = io.WriteString(feed, strings.Join(lines, "\n")+"\n")
		feed.Close()
	}()
	term := &terminal.Channel{In: in, Out: io.Discard, SenderID: "tester"}
	rt, err := a.NewRuntime(ctx, app.RuntimeOptions{Channels: []channels.Channel{term}, Provider: quoteProvider{}})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	term.OnEnd = func(bool) {
		if err := rt.WaitIdle(runCtx); err != nil && runCtx.Err() == nil {
			t.Error(err)
		}
		stop()
	}
	if err := rt.Run(runCtx); err != nil && ctx.Err() == nil {
		t.Fatal(err)
	}
}

// contextLine returns the ContextBuilt data `omega timeline --json`
// printed for a turn.
func contextLine(t *testing.T, out string) turn.ContextBuilt {
	t.Helper()
	for line := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		var ev struct {
			Type string          `json:"type"`
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if ev.Type == "ContextBuilt" {
			var c turn.ContextBuilt
			if err := json.Unmarshal(ev.Data, &c); err != nil {
				t.Fatal(err)
			}
			return c
		}
	}
	t.Fatalf("no context in\n%s", out)
	return turn.ContextBuilt{}
}

// omega timeline shows a turn's prompt in full although the turn
// recorded it by reference, and a context recorded in full by the old
// schema is shown the same way.
func TestTimelineShowsThePromptInFull(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Setenv("OMEGA_DATA_DIR", t.TempDir())
			t.Setenv("HOME", t.TempDir())
			t.Setenv("OMEGA_CLASSIFY", "false")
			t.Setenv("OMEGA_TIMEZONE", "UTC")
			t.Setenv("OMEGA_DATABASE_URL", "")
			if backend == "postgres" {
				t.Setenv("OMEGA_DATABASE_URL", pgtest.DSN(t))
			}
			chatTurns(t, "first question ✓", "second question — ¿sí?", "third question")

			out := runOmega(t, "timeline", "--sender", "terminal:tester", "--limit", "1", "--json")
			c := contextLine(t, out)
			// The identity as resolved for the chat's process (terminal, its tools).
			identity := strings.TrimSpace(prompts.Defaults().For(prompts.ParseCapabilities(c.Capabilities)).Section(promptctx.Identity))
			if !strings.Contains(c.System, identity) || !strings.Contains(identity, "through a terminal") || c.Prompt != "third question" || c.Message != "third question" {
				t.Fatalf("timeline context: system %d bytes, prompt %q, message %q", len(c.System), c.Prompt, c.Message)
			}
			if len(c.History) != 4 || c.History[0].Text != "first question ✓" || c.History[3].Text != "you asked: second question — ¿sí?" {
				t.Fatalf("timeline history %+v", c.History)
			}
			text := runOmega(t, "timeline", "--sender", "terminal:tester", "--limit", "1")
			if want := fmt.Sprintf("history=4 facts=0 prompt=%dB", len(c.System)+len(c.Prompt)); !strings.Contains(text, want) {
				t.Fatalf("timeline lacks %q:\n%s", want, text)
			}

			// A turn recorded before the prompt was kept by reference.
			id := oldTurn(t, c)
			old := contextLine(t, runOmega(t, "timeline", id, "--json"))
			if old.System != c.System || old.Prompt != "an old question" || len(old.History) != 4 || old.History[3].Text != c.History[3].Text {
				t.Fatalf("old context shown as %+v", old)
			}
			if text := runOmega(t, "timeline", id); !strings.Contains(text, fmt.Sprintf("prompt=%dB", len(c.System)+len("an old question"))) {
				t.Fatalf("old turn timeline:\n%s", text)
			}
		})
	}
}

// oldTurn records a turn whose context schema 1 recorded in full, as
// omega wrote it before, and returns its id.
func oldTurn(t *testing.T, like turn.ContextBuilt) string {
	t.Helper()
	cfg, err := config.Load()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, err := app.Open(ctx, cfg, slog.New(slog.DiscardHandler), app.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	id := uuid.NewString()
	md := domain.Metadata{CorrelationID: id, Channel: "terminal", Sender: "oldtimer"}
	evs, err := domain.NewEvents(md, turn.MessageReceived{Channel: "terminal", SenderID: "oldtimer", ChatID: "oldtimer", Text: "an old question", Trusted: true},
		turn.AccessGranted{Reason: "owner channel terminal"})
	if err != nil {
		t.Fatal(err)
	}
	history, _ := json.Marshal(like.History)
	v1 := fmt.Sprintf(`{"conversation_id":%q,"language":"English","model":"m","sections_used":["Identity"],"system":%s,"prompt":"an old question","message":"an old question","history":%s,"facts_count":0}`,
		id, mustJSON(t, like.System), history)
	v1md := md
	v1md.SchemaVersion = 1
	evs = append(evs, domain.NewEvent{ID: uuid.New(), Type: "ContextBuilt", Data: json.RawMessage(v1), Metadata: v1md})
	rest, err := domain.NewEvents(md, turn.ProviderCalled{Provider: "quote", Model: "m", Attempt: 1}, turn.ReplyReady{Text: "an old answer"},
		turn.TurnCompleted{Status: turn.StatusOK})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Store.Append(ctx, domain.TurnStream(id), eventstore.NoStream, append(evs, rest...)...); err != nil {
		t.Fatal(err)
	}
	return id
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
