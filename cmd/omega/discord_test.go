package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels/discord/discordtest"
	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
)

const (
	discordToken = "MTAwMDAwMDAwMDAwMDAwMDAx.e2e.token"
	discordOwner = "200000000000000042"
	discordGuild = "700000000000000001"
	discordRoom  = "700000000000000002"
)

// discordClaude answers "done: <last line>"; on HINT whether its prompt
// has Discord's platform line; on LONG with a reply of many
// paragraphs, and on PHOTO it says how many bytes the photo it was sent
// has and draws chart.png into its working directory, which omega
// uploads.
func discordClaude(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "claude")
	script := `#!/bin/sh
prompt=$(cat)
last=$(printf '%s' "$prompt" | tail -n 1 | tr -d '"\\' | sed 's/^\[User\]: //')
result="done: $last"
case "$prompt" in
  *"Summarize the conversation below"*) result="They talked." ;;
  *"Extract durable personal facts"*) result="none" ;;
esac
case "$last" in
  *PHOTO*) result="received $(cat inbox/*/* | wc -c | tr -d ' ') bytes"; printf '\211PNG\r\n\032\nomega chart' > chart.png ;;
  *HINT*) case "$prompt" in *"Replies are shown in Discord"*) result="hint: discord" ;; *) result="hint: none" ;; esac ;;
  *LONG*) i=0; result="done: long"; while [ $i -lt 60 ]; do result="$result\n\nparagraph $i lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor"; i=$((i+1)); done ;;
esac
printf '{"type":"result","subtype":"success","is_error":false,"result":"%s","session_id":"s-%s","num_turns":1}\n' "$result" "$$"
`
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

func discordEnv(t *testing.T, e shutdownEnv, gw *discordtest.Server) []string {
	return append(e.env, "OMEGA_CLAUDE_BIN="+discordClaude(t, t.TempDir()), "OMEGA_TELEGRAM_TOKEN=", "OMEGA_WHATSAPP_ENABLED=", "OMEGA_EMAIL_IMAP_ADDR=",
		"OMEGA_DISCORD_TOKEN="+discordToken, "OMEGA_DISCORD_API_URL="+gw.URL, "OMEGA_DISCORD_ALLOWED_USERS="+discordOwner,
		"OMEGA_DISCORD_STALL_GRACE=1s", "OMEGA_DISCORD_BACKOFF_MAX=1s", "OMEGA_CHANNEL_DOWN_ALERT=2s")
}

// waitDiscord waits for a message in channel containing text and returns
// everything posted there.
func waitDiscord(t *testing.T, gw *discordtest.Server, channel, text string) []discordtest.Sent {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		sent := gw.SentTo(channel)
		var got []string
		for _, m := range sent {
			if strings.Contains(m.Content, text) {
				return sent
			}
			got = append(got, m.Content)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no message with %q in channel %s; got %q", text, channel, got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// omega serve with only OMEGA_DISCORD_* set answers a DM (typing first,
// Discord's platform line in the prompt), ignores a guild
// message that does not mention it and answers one that does, in the
// guild channel; a reply Discord rate-limits arrives once, after
// Retry-After; a long reply arrives in messages of at most 2,000
// characters; a photo sent to it reaches the model, and the image the
// model draws is uploaded.
func TestServeDiscord(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildOmega(t)
	gw := discordtest.New(t, discordToken)
	dm := gw.DMChannel(discordOwner)
	vars, open := storeBackends()[0].env(t)
	e := newShutdownEnv(t, vars, open)
	startServe(t, bin, discordEnv(t, e, gw))
	waitHTTP(t, e.url)
	gw.WaitConnected(t)

	// The first turn of a session carries the system prompt.
	gw.PushDM(discordOwner, "hello there, which HINT do you have?")
	waitDiscord(t, gw, dm, "hint: discord")
	if typing := gw.Typing(); len(typing) == 0 || typing[0] != dm {
		t.Errorf("typing shown in %v, want the DM %s", typing, dm)
	}

	// Discord answers the reply with 429: omega waits Retry-After, then
	// sends it once.
	route := "POST /channels/" + dm + "/messages"
	posted := len(gw.Requests(route))
	gw.RateLimitNext("POST messages", time.Second)
	gw.PushDM(discordOwner, "slow down RATELIMITED")
	waitDiscord(t, gw, dm, "done: slow down RATELIMITED")
	if calls := gw.Requests(route)[posted:]; len(calls) != 2 || calls[1].Sub(calls[0]) < time.Second {
		t.Errorf("after a 429 with Retry-After 1s: calls at %v", calls)
	}
	if n := countContaining(gw.SentTo(dm), "RATELIMITED"); n != 1 {
		t.Errorf("the rate-limited reply arrived %d times", n)
	}

	gw.PushGuild(discordGuild, discordRoom, discordOwner, "just chatting NOMENTION", false)
	gw.PushGuild(discordGuild, discordRoom, discordOwner, "what about MENTIONED", true)
	for _, m := range waitDiscord(t, gw, discordRoom, "MENTIONED") {
		if strings.Contains(m.Content, "NOMENTION") {
			t.Fatalf("answered a guild message that did not mention the bot: %q", m.Content)
		}
	}

	before := len(gw.SentTo(dm))
	gw.PushDM(discordOwner, "please be LONG")
	sent := waitDiscord(t, gw, dm, "paragraph 59")[before:]
	if len(sent) < 3 {
		t.Fatalf("a reply of 60 paragraphs came in %d message(s)", len(sent))
	}
	for _, m := range sent {
		if len([]rune(m.Content)) > 2000 {
			t.Fatalf("a message of %d characters", len([]rune(m.Content)))
		}
	}

	png := []byte("\x89PNG\r\n\x1a\n a photo for omega")
	gw.Push(discordtest.Message{ChannelID: dm, AuthorID: discordOwner, Author: "owner", Content: "PHOTO: what is this?",
		Attachments: []discordtest.Attachment{{Name: "cat.png", ContentType: "image/png", Data: png}}})
	waitDiscord(t, gw, dm, fmt.Sprintf("received %d bytes", len(png)))
	deadline := time.Now().Add(30 * time.Second)
	for !sentFile(gw, dm, []byte("\x89PNG\r\n\x1a\nomega chart")) {
		if time.Now().After(deadline) {
			t.Fatalf("the photo never came back; sent %+v", gw.SentTo(dm))
		}
		time.Sleep(20 * time.Millisecond)
	}

	// A stranger gets a pairing code; the owner approves it in their DM
	// and the stranger's next message is answered.
	const stranger = "200000000000000099"
	gw.PushDM(stranger, "hi, who are you?")
	sent = waitDiscord(t, gw, gw.DMChannel(stranger), "Your pairing code is")
	code := pairingCode.FindStringSubmatch(sent[len(sent)-1].Content)
	if code == nil {
		t.Fatalf("no code in %q", sent[len(sent)-1].Content)
	}
	waitDiscord(t, gw, dm, code[1])
	gw.PushDM(discordOwner, "/pair approve "+code[1])
	waitDiscord(t, gw, gw.DMChannel(stranger), "approved")
	gw.PushDM(stranger, "now PAIRED")
	waitDiscord(t, gw, gw.DMChannel(stranger), "done: now PAIRED")
}

var pairingCode = regexp.MustCompile(`pairing code is ([A-Z0-9]{6})`)

func sentFile(gw *discordtest.Server, channel string, data []byte) bool {
	for _, m := range gw.SentTo(channel) {
		for _, f := range m.Files {
			if string(f.Data) == string(data) {
				return true
			}
		}
	}
	return false
}

// omega serve against a Discord gateway that restarts, stalls (stops
// acknowledging heartbeats) and answers 502: /readyz names the channel
// while it cannot receive, the owner is told on Telegram once it stays
// down past OMEGA_CHANNEL_DOWN_ALERT and when it is back, every
// message sent meanwhile is answered exactly once after the gateway
// answers again, and /metrics counts the outage and the stall.
func TestServeDiscordOutageAndStall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildOmega(t)
	for _, b := range storeBackends() {
		t.Run(b.name, func(t *testing.T) {
			gw := discordtest.New(t, discordToken)
			gw.SetHeartbeatInterval(time.Second)
			dm := gw.DMChannel(discordOwner)
			tg := telegramtest.New(t, healthToken)
			vars, open := b.env(t)
			e := newShutdownEnv(t, vars, open)
			startServe(t, bin, append(discordEnv(t, e, gw), "OMEGA_TELEGRAM_TOKEN="+healthToken, "OMEGA_TELEGRAM_API_URL="+tg.URL,
				"OMEGA_TELEGRAM_ALLOWED_USERS=42", "OMEGA_TELEGRAM_POLL_TIMEOUT=1s"))
			waitHTTP(t, e.url)
			gw.WaitConnected(t)
			gw.PushDM(discordOwner, "first RESTART-ONE")
			waitDiscord(t, gw, dm, "done: first RESTART-ONE")

			gw.Stop()
			waitReadyz(t, e.url, http.StatusOK, "ready, degraded\nchannel discord: down")
			gw.PushDM(discordOwner, "sent while down RESTART-TWO")
			gw.Restart()
			waitDiscord(t, gw, dm, "done: sent while down RESTART-TWO")
			waitReadyzExactly(t, e.url, "ready\n")

			gw.StopAcking(true)
			waitReadyz(t, e.url, http.StatusOK, "channel discord: stalled")
			gw.StopAcking(false)
			waitReadyzExactly(t, e.url, "ready\n")

			gw.Outage(http.StatusBadGateway)
			waitReadyz(t, e.url, http.StatusOK, "channel discord: down")
			gw.PushDM(discordOwner, "sent during the outage OUTAGE-THREE")
			waitOwnerMessage(t, tg, "discord has not received messages")
			gw.EndOutage()
			waitDiscord(t, gw, dm, "done: sent during the outage OUTAGE-THREE")
			waitOwnerMessage(t, tg, "discord is receiving messages again")
			waitReadyzExactly(t, e.url, "ready\n")
			for _, marker := range []string{"RESTART-ONE", "RESTART-TWO", "OUTAGE-THREE"} {
				if n := countContaining(gw.SentTo(dm), marker); n != 1 {
					t.Errorf("%s answered %d times", marker, n)
				}
			}
			waitMetrics(t, e.url, `omega_channel_up{channel="discord"} 1`,
				`omega_channel_failures_total{channel="discord",state="down"} 2`,
				`omega_channel_failures_total{channel="discord",state="stalled"} 1`)
		})
	}
}

func countContaining(sent []discordtest.Sent, text string) int {
	n := 0
	for _, m := range sent {
		if strings.Contains(m.Content, text) {
			n++
		}
	}
	return n
}

// omega killed and started again reads back what was sent to it on
// Discord while it was down (a new gateway session replays nothing) and
// answers it once, without answering anything twice.
func TestServeDiscordReadsBackAfterRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildOmega(t)
	for _, b := range storeBackends() {
		t.Run(b.name, func(t *testing.T) {
			gw := discordtest.New(t, discordToken)
			dm := gw.DMChannel(discordOwner)
			vars, open := b.env(t)
			e := newShutdownEnv(t, vars, open)
			env := discordEnv(t, e, gw)
			p := startServe(t, bin, env)
			waitHTTP(t, e.url)
			gw.WaitConnected(t)
			gw.PushDM(discordOwner, "before the crash CRASH-ONE")
			waitDiscord(t, gw, dm, "done: before the crash CRASH-ONE")
			// A turn killed between its reply and its completion is sent
			// again on restart (omega's own at-least-once), which is not
			// what this test is about.
			waitCounted(t, e.url, 1)
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
			for gw.Connected() {
				time.Sleep(10 * time.Millisecond)
			}

			gw.PushDM(discordOwner, "while omega was down CRASH-TWO")
			startServe(t, bin, env)
			waitHTTP(t, e.url)
			waitDiscord(t, gw, dm, "done: while omega was down CRASH-TWO")
			gw.PushDM(discordOwner, "after the restart CRASH-THREE")
			waitDiscord(t, gw, dm, "done: after the restart CRASH-THREE")
			for _, marker := range []string{"CRASH-ONE", "CRASH-TWO", "CRASH-THREE"} {
				if n := countContaining(gw.SentTo(dm), marker); n != 1 {
					t.Errorf("%s answered %d times", marker, n)
				}
			}
		})
	}
}
