package app_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
	"github.com/omega-gateway/omega/channels/whatsapp"
	"github.com/omega-gateway/omega/channels/whatsapp/whatsapptest"
	"github.com/omega-gateway/omega/cmd/rerun"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/handlers/intake"
	"github.com/omega-gateway/omega/handlers/pipeline"
)

// chartPNG is what the Claude Code double draws into its working
// directory when asked to DRAW (the printf below writes these bytes).
const chartPNG = "\x89PNG\r\n\x1a\nomega chart"

// drawingClaude writes a Claude Code double that, during the call, draws
// chart.png into its working directory on "DRAW", copies the user's
// inbox photo into it as copy.jpg on "COPY", and answers "echo: <last>".
func drawingClaude(t *testing.T) string {
	t.Helper()
	return writeClaude(t, t.TempDir(), `case "$last" in
  *DRAW*) printf '\211PNG\r\n\032\nomega chart' > chart.png ;;
  *COPY*) for f in inbox/*/*; do cp "$f" copy.jpg; done ;;
esac
printf '{"type":"result","subtype":"success","is_error":false,"result":"echo: %s","session_id":"s1","num_turns":1}\n' "$last"
`)
}

// photoCalls returns the accepted sendPhoto calls to chat.
func photoCalls(api *telegramtest.Server, chat int64) []telegramtest.Call {
	id := strconv.FormatInt(chat, 10)
	var out []telegramtest.Call
	for _, c := range api.Sent() {
		if c.Method == "sendPhoto" && c.ChatID == id && c.Accepted() {
			out = append(out, c)
		}
	}
	return out
}

// Images the provider makes in the workspace during a turn reach the user
// through the Telegram Bot API double once, after the reply, and are on
// record; an image that was there before and the user's own photo are
// never sent.
func TestWorkspaceImagesSentThroughTelegram(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			api := telegramtest.New(t, tgToken)
			vars := telegramVars(baseVars(t, b, drawingClaude(t)), api, "42")
			ws := filepath.Join(vars["OMEGA_DATA_DIR"], "workspace")
			if err := os.MkdirAll(ws, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(ws, "old.png"), []byte("\x89PNG old"), 0o600); err != nil {
				t.Fatal(err)
			}
			n := startTelegramNode(t, vars)

			var turns []string
			t.Run("a drawn image is sent once after the reply", func(t *testing.T) { turns = append(turns, imgDrawn(t, n, api)) })
			t.Run("the user's photo is not echoed", func(t *testing.T) { turns = append(turns, imgNotEchoed(t, n, api)) })
			t.Run("an unchanged image is not sent again", func(t *testing.T) {
				id := tgTurnID(tgUser, api.PushText(tgUser, tgUser, "anything new?"))
				turns = append(turns, id)
				evs := n.waitTurn(t, id)
				if got := len(photoCalls(api, tgUser)); got != 1 {
					t.Fatalf("%d photos sent in all, want still 1", got)
				}
				// Nothing to send or skip: no finding on record, the
				// completion follows the reply.
				if got := countType(evs, "WorkspaceImagesFound"); got != 0 {
					t.Fatalf("%d WorkspaceImagesFound in an unchanged workspace: %s", got, eventTypes(evs))
				}
			})
			t.Run("re-runs compare the recorded images and send nothing", func(t *testing.T) {
				cfg := loadConfig(t, vars)
				sent := len(api.Sent())
				for _, id := range turns {
					res, err := rerun.Run(context.Background(), n.rt.Store, n.rt.Registry, cfg, id, rerun.Options{})
					if err != nil {
						t.Fatal(err)
					}
					if !res.Identical {
						t.Errorf("turn %s re-ran differently:\n%s", id, strings.Join(res.Diff, "\n"))
					}
				}
				if got := len(api.Sent()); got != sent {
					t.Fatalf("a re-run called the Bot API %d time(s)", got-sent)
				}
			})
		})
	}
}

func imgDrawn(t *testing.T, n *tgNode, api *telegramtest.Server) string {
	id := tgTurnID(tgUser, api.PushText(tgUser, tgUser, "please DRAW a chart"))
	evs := n.waitTurn(t, id)
	photos := photoCalls(api, tgUser)
	if len(photos) != 1 || string(photos[0].Photo) != chartPNG {
		t.Fatalf("%d photos sent, want chart.png once: %+v", len(photos), photos)
	}
	// The photo follows the reply.
	var order []string
	for _, c := range api.Sent() {
		if c.Accepted() && (c.Method == "sendPhoto" || c.Method == "sendMessage") {
			order = append(order, c.Method+":"+c.Text)
		}
	}
	if len(order) < 2 || order[len(order)-2] != "sendMessage:echo: please DRAW a chart" || order[len(order)-1] != "sendPhoto:" {
		t.Fatalf("calls %q, want the reply then the photo", order)
	}
	sent := payload[turn.WorkspaceImageSent](t, n, evs)
	if sent.Path != "chart.png" || sent.Size != int64(len(chartPNG)) || len(sent.PlatformIDs) != 1 ||
		sent.PlatformIDs[0] != strconv.FormatInt(photos[0].MessageID, 10) {
		t.Fatalf("WorkspaceImageSent %+v, photo message %d", sent, photos[0].MessageID)
	}
	if got := countType(evs, "WorkspaceImageSent"); got != 1 {
		t.Fatalf("%d WorkspaceImageSent", got)
	}
	if found := payload[turn.WorkspaceImagesFound](t, n, evs); len(found.Images) != 1 || found.Images[0].Path != "chart.png" {
		t.Fatalf("found %+v: old.png was there before and must not be sent", found)
	}
	return id
}

func imgNotEchoed(t *testing.T, n *tgNode, api *telegramtest.Server) string {
	api.AddFile("their-photo", []byte("\xff\xd8\xff\xe0 the user's photo"))
	msg := telegramtest.Message(tgUser, tgUser, "")
	msg["caption"] = "COPY it"
	msg["photo"] = []map[string]any{{"file_id": "their-photo", "file_unique_id": "u1", "width": 800, "height": 600}}
	id := tgTurnID(tgUser, api.PushUpdate(map[string]any{"message": msg}))
	evs := n.waitTurn(t, id)
	if got := len(photoCalls(api, tgUser)); got != 1 {
		t.Fatalf("%d photos sent in all, want still 1: the user's photo was echoed", got)
	}
	found := payload[turn.WorkspaceImagesFound](t, n, evs)
	if len(found.Images) != 0 || len(found.Skipped) != 1 || found.Skipped[0].Path != "copy.jpg" || found.Skipped[0].Reason != turn.ImageSkipInbound {
		t.Fatalf("found %+v, want copy.jpg skipped as the user's own", found)
	}
	return id
}

// On WhatsApp the drawn image goes out as an image message after the
// reply, once, with its message id on record.
func TestWorkspaceImagesSentThroughWhatsApp(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			vars := baseVars(t, b, drawingClaude(t))
			vars["OMEGA_WHATSAPP_ENABLED"] = "true"
			vars["OMEGA_WHATSAPP_ALLOWED_NUMBERS"] = "+49 151 1234 5678"
			cfg := loadConfig(t, vars)
			fake := whatsapptest.New()
			wa := whatsapp.NewWithClient(whatsapp.From(cfg.Channels), fake, quiet)
			auth := &pipeline.Auth{Allowed: map[string][]string{whatsapp.Name: whatsapp.From(cfg.Channels).AllowedNumbers}}
			n := startChannelNode(t, cfg, app.RuntimeOptions{Channels: []channels.Channel{wa}, Auth: auth}, nil)

			waitFor(t, "the channel to acknowledge the message", func() bool {
				ok, err := fake.Deliver(whatsapptest.TextFrom("WADRAW1", "4915112345678", "please DRAW a chart"))
				if err != nil {
					t.Fatal(err)
				}
				return ok
			})
			evs := n.waitTurn(t, intake.TurnID(channels.Incoming{Channel: whatsapp.Name, PlatformID: "WADRAW1"}))
			// The reply streams into one message that is edited; the
			// image follows it as a message of its own.
			var sent []whatsapptest.Sent
			for _, s := range fake.Sent() {
				if s.EditOf == "" {
					sent = append(sent, s)
				}
			}
			if len(sent) != 3 || sent[1].Image {
				t.Fatalf("sent %+v, want welcome, reply, image", sent)
			}
			if vis := fake.Visible(sent[1].To); len(vis) != 2 || vis[1].Text != "echo: please DRAW a chart" {
				t.Fatalf("the chat shows %+v, want the welcome and the whole reply", vis)
			}
			if img := sent[2]; !img.Image || img.MIME != "image/png" || img.Size != uint64(len(chartPNG)) {
				t.Fatalf("image message %+v", img)
			}
			rec := payload[turn.WorkspaceImageSent](t, n, evs)
			if rec.Path != "chart.png" || len(rec.PlatformIDs) != 1 || rec.PlatformIDs[0] != sent[2].ID {
				t.Fatalf("WorkspaceImageSent %+v, image message %s", rec, sent[2].ID)
			}
		})
	}
}
