package main

import (
	"context"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels/slack/slacktest"
	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
	"github.com/omega-gateway/omega/domain/system"
)

const slackAlice = "UALICE01"

// omega serve with only a user's environment, against the Slack double
// (Web API and Socket Mode) and, for the owner's alerts, the Telegram
// double: a direct message is answered; in a channel only a mention is,
// in a thread under it; a 429 is waited out; the double restarting,
// answering 502 and stalling is recorded (ChannelStalled,
// ChannelRecovered), shown by /readyz and /metrics and, past
// OMEGA_CHANNEL_DOWN_ALERT, told to the owner on Telegram; every message
// written meanwhile is answered exactly once, also when Slack offers
// them again to a restarted omega; a stranger gets a pairing code.
func TestServeSlack(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildOmega(t)
	for _, b := range storeBackends() {
		t.Run(b.name, func(t *testing.T) {
			owner := telegramtest.New(t, healthToken)
			s := slacktest.New(t)
			vars, open := b.env(t)
			e := newShutdownEnv(t, vars, open)
			env := append(e.env, "OMEGA_TELEGRAM_TOKEN="+healthToken, "OMEGA_TELEGRAM_API_URL="+owner.URL,
				"OMEGA_TELEGRAM_ALLOWED_USERS=42", "OMEGA_SLACK_BOT_TOKEN="+slacktest.BotToken, "OMEGA_SLACK_APP_TOKEN="+slacktest.AppToken,
				"OMEGA_SLACK_API_URL="+s.APIURL(), "OMEGA_SLACK_ALLOWED_USERS="+slackAlice, "OMEGA_SLACK_KEEPALIVE=1s",
				"OMEGA_SLACK_STALL_GRACE=1s", "OMEGA_SLACK_BACKOFF_MAX=1s", "OMEGA_CHANNEL_DOWN_ALERT=1s")
			p := startServe(t, bin, env)
			waitHTTP(t, e.url)
			waitSlack(t, "the Socket Mode connection", s.Connected)
			dm := slacktest.DMChannel(slackAlice)

			s.PushDM(slackAlice, "hello slack")
			waitSlackReply(t, s, dm, "done: hello slack")

			s.PushChannel(slackAlice, "CTEAM", "just chatting", "")
			ts := s.PushChannel(slackAlice, "CTEAM", "<@"+slacktest.BotUserID+"> are you there", "")
			if m := waitSlackReply(t, s, "CTEAM", "done: are you there"); m.ThreadTS != ts {
				t.Fatalf("the mention was answered in thread %q, want %q", m.ThreadTS, ts)
			}
			if calls, _ := os.ReadFile(e.callLog); strings.Contains(string(calls), "just chatting") {
				t.Fatalf("a channel message without a mention reached the model:\n%s", calls)
			}

			s.RateLimit("chat.postMessage", 1)
			s.PushDM(slackAlice, "after a rate limit")
			waitSlackReply(t, s, dm, "done: after a rate limit")

			s.Stop()
			waitReadyz(t, e.url, http.StatusOK, "channel slack: down")
			s.PushDM(slackAlice, "while restarting")
			s.Start()
			waitSlackReply(t, s, dm, "done: while restarting")
			waitReadyzExactly(t, e.url, "ready\n")

			s.Outage("*", http.StatusBadGateway)
			waitReadyz(t, e.url, http.StatusOK, "ready, degraded\nchannel slack: down")
			waitOwnerMessage(t, owner, "slack has not received messages")
			s.EndOutage("*")
			s.PushDM(slackAlice, "anyone there")
			waitOwnerMessage(t, owner, "slack is receiving messages again")
			waitSlackReply(t, s, dm, "done: anyone there")
			waitReadyzExactly(t, e.url, "ready\n")

			s.Stall(true)
			waitReadyz(t, e.url, http.StatusOK, "ready, degraded\nchannel slack: stalled")
			s.PushDM(slackAlice, "during the stall")
			s.Stall(false)
			waitSlackReply(t, s, dm, "done: during the stall")
			waitReadyzExactly(t, e.url, "ready\n")
			waitMetrics(t, e.url, `omega_channel_up{channel="slack"} 1`,
				`omega_channel_failures_total{channel="slack",state="stalled"} 1`)

			stranger := slacktest.DMChannel("UMALLORY")
			s.PushDM("UMALLORY", "let me in")
			waitSlackReply(t, s, stranger, "pairing code")

			// omega stops after recording messages whose acknowledgements
			// Slack did not get: the new process is offered them again and
			// answers none twice.
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			exitOf(t, p, 30*time.Second)
			hellos := s.Hellos()
			startServe(t, bin, env)
			waitSlack(t, "the new process's connection", func() bool { return s.Hellos() > hellos && s.Connected() })
			s.ReplayAcked()
			s.PushDM(slackAlice, "after omega restarted")
			waitSlackReply(t, s, dm, "done: after omega restarted")
			waitSlack(t, "every replayed envelope acknowledged", func() bool { return s.Pending() == 0 })
			if calls, _ := os.ReadFile(e.callLog); strings.Contains(string(calls), "let me in") {
				t.Fatalf("the stranger's message reached the model:\n%s", calls)
			}
			if n := countReplies(s, stranger, "pairing code"); n != 1 {
				t.Errorf("the stranger got %d pairing replies", n)
			}

			for _, text := range []string{"hello slack", "after a rate limit", "while restarting", "anyone there", "during the stall", "after omega restarted"} {
				if n := countReplies(s, dm, "done: "+text); n != 1 {
					t.Errorf("%q answered %d times", text, n)
				}
			}
			evs, err := e.open().Load(context.Background(), system.ChannelStream("slack"), 1)
			if err != nil {
				t.Fatal(err)
			}
			recorded := map[string]int{}
			for _, ev := range evs {
				recorded[ev.Type]++
			}
			if recorded["ChannelStalled"] != 1 || recorded["ChannelRecovered"] < 3 {
				t.Fatalf("channel-slack records %v", recorded)
			}
		})
	}
}

func waitSlack(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitSlackReply waits for the bot's message in channel containing text.
func waitSlackReply(t *testing.T, s *slacktest.Server, channel, text string) slacktest.Message {
	t.Helper()
	var found slacktest.Message
	waitSlack(t, "a reply with "+text+" in "+channel, func() bool {
		for _, m := range s.Messages(channel) {
			if strings.Contains(m.Text, text) {
				found = m
				return true
			}
		}
		return false
	})
	return found
}

func countReplies(s *slacktest.Server, channel, text string) int {
	n := 0
	for _, m := range s.Messages(channel) {
		if strings.Contains(m.Text, text) {
			n++
		}
	}
	return n
}
