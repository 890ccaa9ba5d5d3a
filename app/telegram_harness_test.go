package app_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/app/config"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/telegram"
	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/handlers/intake"
	"github.com/omega-gateway/omega/handlers/pipeline"
	"github.com/omega-gateway/omega/internal/wait"
)

// tgToken has the shape telego insists on.
const tgToken = "123456:ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghi"

// richClaude writes a Claude Code double whose reply depends on the
// message's last line: "MDTEST" gets Markdown with bold and a code block,
// "LONGTEST" a 10,000-character reply of 200 numbered lines, anything else
// "echo: <last line>". Every prompt is appended to the returned log,
// between "<<<" and ">>>" lines.
func richClaude(t *testing.T) (bin, promptLog string) {
	t.Helper()
	dir := t.TempDir()
	promptLog = filepath.Join(dir, "prompts.log")
	script := `printf '<<<\n%s\n>>>\n' "$prompt" >> "` + promptLog + `"
case "$last" in
  *MDTEST*) result='Here is **bold** text and code:\n\n` + "```go\\nfmt.Println(1 < 2)\\n```" + `' ;;
  *LONGTEST*) result=$(awk 'BEGIN { for (i = 1; i <= 200; i++) printf "Line %04d %s\\n", i, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" }') ;;
  *) result="echo: $last" ;;
esac
printf '{"type":"result","subtype":"success","is_error":false,"result":"%s","session_id":"sess-1","num_turns":1,"usage":{"input_tokens":10,"output_tokens":5}}\n' "$result"
`
	bin = writeClaude(t, dir, script)
	return bin, promptLog
}

// tgNode is an omega process running real channels against platform
// doubles, wired the way `omega serve` wires them.
type tgNode struct {
	rt   *app.Runtime
	stop func()
}

// telegramVars configures Telegram against api with the allowed users.
func telegramVars(vars map[string]string, api *telegramtest.Server, allowed string) map[string]string {
	out := map[string]string{
		"OMEGA_TELEGRAM_TOKEN":         tgToken,
		"OMEGA_TELEGRAM_API_URL":       api.URL,
		"OMEGA_TELEGRAM_ALLOWED_USERS": allowed,
	}
	for k, v := range vars {
		out[k] = v
	}
	return out
}

func startTelegramNode(t *testing.T, vars map[string]string) *tgNode {
	t.Helper()
	cfg := loadConfig(t, vars)
	// Waits (pacing, retry_after, backoff) are real but short, so a 429
	// costs milliseconds instead of seconds.
	tg, err := telegram.New(telegram.From(cfg.Channels), quiet, telegram.WithPollTimeout(time.Second), telegram.WithSleep(shortSleep))
	if err != nil {
		t.Fatal(err)
	}
	auth := &pipeline.Auth{Allowed: map[string][]string{telegram.Name: telegram.From(cfg.Channels).AllowedUserIDs()}}
	// BotName as `omega serve` wires it (ChannelSet.RuntimeOptions), so
	// that "/cmd@bot" in a group is a command.
	return startChannelNode(t, cfg, app.RuntimeOptions{Channels: []channels.Channel{tg}, Auth: auth, BotName: tg.BotUsername}, nil)
}

func loadConfig(t testing.TB, vars map[string]string) config.Config {
	t.Helper()
	cfg, err := config.LoadFrom(vars)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// startChannelNode runs the pipeline with opts until the test ends;
// ready, when set, sees the runtime before it runs.
func startChannelNode(t testing.TB, cfg config.Config, opts app.RuntimeOptions, ready func(*app.Runtime)) *tgNode {
	t.Helper()
	return startLoggedNode(t, cfg, quiet, opts, ready)
}

// startLoggedNode is startChannelNode with the process logger given.
func startLoggedNode(t testing.TB, cfg config.Config, logger *slog.Logger, opts app.RuntimeOptions, ready func(*app.Runtime)) *tgNode {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.Open(ctx, cfg, logger, app.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := a.NewRuntime(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if ready != nil {
		ready(rt)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := rt.Run(ctx); err != nil {
			t.Errorf("runtime: %v", err)
		}
	}()
	n := &tgNode{rt: rt}
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

// shortSleep keeps the channel's backoffs short in tests.
func shortSleep(ctx context.Context, d time.Duration) error {
	return wait.Sleep(ctx, min(d, 20*time.Millisecond))
}

// tgTurnID is the turn a Telegram message becomes (message ids assigned by
// the double equal the update id unless set).
func tgTurnID(chatID, messageID int64) string {
	return intake.TurnID(channels.Incoming{Channel: telegram.Name, PlatformID: strconv.FormatInt(chatID, 10) + ":" + strconv.FormatInt(messageID, 10)})
}

func (n *tgNode) events(t *testing.T, turnID string) []domain.Event {
	t.Helper()
	evs, err := n.rt.Store.Load(context.Background(), domain.TurnStream(turnID), 1)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// waitTurn waits until the turn completed and returns its events.
func (n *tgNode) waitTurn(t *testing.T, turnID string) []domain.Event {
	t.Helper()
	var evs []domain.Event
	waitFor(t, "turn "+turnID, func() bool {
		evs = n.events(t, turnID)
		return countType(evs, completed) == 1
	})
	return evs
}

// payload decodes the turn's first event of type P; a ReplySent reads
// the text it left to ReplyReady.
func payload[P domain.Payload](t *testing.T, n *tgNode, evs []domain.Event) P {
	t.Helper()
	var zero P
	var sent turn.SentTexts
	for _, e := range evs {
		if e.Type != zero.EventType() && e.Type != (turn.ReplyReady{}).EventType() {
			continue
		}
		p, err := n.rt.Registry.Decode(e)
		if err != nil {
			t.Fatal(err)
		}
		if p = sent.Fill(p); e.Type == zero.EventType() {
			return p.(P)
		}
	}
	t.Fatalf("no %s event in %s", zero.EventType(), eventTypes(evs))
	return zero
}

func eventTypes(evs []domain.Event) string {
	var names []string
	for _, e := range evs {
		names = append(names, e.Type)
	}
	return strings.Join(names, " ")
}

func (n *tgNode) queryInt(t *testing.T, q string, args ...any) int {
	t.Helper()
	var v int
	if err := n.rt.DBForTests().QueryRow(q, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return v
}

// sendMessages returns every sendMessage call to chat, accepted or not.
func sendMessages(api *telegramtest.Server, chat int64) []telegramtest.Call {
	id := strconv.FormatInt(chat, 10)
	var out []telegramtest.Call
	for _, c := range api.Sent() {
		if c.Method == "sendMessage" && c.ChatID == id {
			out = append(out, c)
		}
	}
	return out
}
