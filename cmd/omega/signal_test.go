package main

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels/signal/signaltest"
	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
)

const (
	signalBot   = "+4915100000001"
	signalAlice = "+4915100000002"
)

// omega serve against the signal-cli daemon double (JSON-RPC and the
// event stream), the owner on the Telegram double: a direct message is
// answered, in a group only a mention; the daemon restarting, answering
// 502 and stalling is recorded, shown by /readyz and told to the owner;
// what arrives while omega itself is down is answered after it starts,
// and nothing is answered twice; a stranger gets a pairing code.
func TestServeSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildOmega(t)
	for _, b := range storeBackends() {
		t.Run(b.name, func(t *testing.T) {
			owner := telegramtest.New(t, healthToken)
			d := signaltest.New(t, signalBot)
			d.SetKeepAlive(300 * time.Millisecond)
			vars, open := b.env(t)
			e := newShutdownEnv(t, vars, open)
			env := append(e.env, "OMEGA_TELEGRAM_TOKEN="+healthToken, "OMEGA_TELEGRAM_API_URL="+owner.URL,
				"OMEGA_TELEGRAM_ALLOWED_USERS=42", "OMEGA_SIGNAL_URL="+d.URL, "OMEGA_SIGNAL_ACCOUNT="+signalBot,
				"OMEGA_SIGNAL_ALLOWED_NUMBERS="+signalAlice, "OMEGA_SIGNAL_KEEPALIVE=1s", "OMEGA_SIGNAL_STALL_GRACE=1s",
				"OMEGA_SIGNAL_BACKOFF_MAX=1s", "OMEGA_CHANNEL_DOWN_ALERT=1s")
			p := startServe(t, bin, env)
			waitHTTP(t, e.url)
			waitSlack(t, "the event stream", d.Connected)

			d.Push(signaltest.Message{From: signalAlice, Name: "Alice", Text: "hello signal"})
			waitSignalReply(t, d, signalAlice, "done: hello signal")
			d.Push(signaltest.Message{From: signalAlice, Text: "group chatter", GroupID: "R3JvdXA="})
			d.Push(signaltest.Message{From: signalAlice, Text: "are you there", GroupID: "R3JvdXA=", MentionBot: true})
			waitSignalReply(t, d, "group:R3JvdXA=", "done: are you there")
			if calls, _ := os.ReadFile(e.callLog); strings.Contains(string(calls), "group chatter") {
				t.Fatalf("a group message without a mention reached the model:\n%s", calls)
			}

			d.Stop()
			waitReadyz(t, e.url, http.StatusOK, "channel signal: down")
			d.Push(signaltest.Message{From: signalAlice, Text: "while the daemon restarts"})
			d.Start()
			waitSignalReply(t, d, signalAlice, "done: while the daemon restarts")
			waitReadyzExactly(t, e.url, "ready\n")

			d.Outage(http.StatusBadGateway)
			waitReadyz(t, e.url, http.StatusOK, "ready, degraded\nchannel signal: down")
			waitOwnerMessage(t, owner, "signal has not received messages")
			d.EndOutage()
			d.Push(signaltest.Message{From: signalAlice, Text: "anyone there"})
			waitOwnerMessage(t, owner, "signal is receiving messages again")
			waitSignalReply(t, d, signalAlice, "done: anyone there")

			d.Stall(true)
			waitReadyz(t, e.url, http.StatusOK, "ready, degraded\nchannel signal: stalled")
			d.Stall(false)
			d.Push(signaltest.Message{From: signalAlice, Text: "after the stall"})
			waitSignalReply(t, d, signalAlice, "done: after the stall")
			waitReadyzExactly(t, e.url, "ready\n")
			waitMetrics(t, e.url, `omega_channel_up{channel="signal"} 1`,
				`omega_channel_failures_total{channel="signal",state="stalled"} 1`)

			d.Push(signaltest.Message{From: "+4915100000666", Text: "let me in"})
			waitSignalReply(t, d, "+4915100000666", "pairing code")

			// omega stops; what arrives meanwhile the daemon keeps, and the
			// new process asks for everything it kept: the new message is
			// answered, the old ones are not answered again.
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			exitOf(t, p, 30*time.Second)
			d.Push(signaltest.Message{From: signalAlice, Text: "while omega was down"})
			startServe(t, bin, env)
			waitSignalReply(t, d, signalAlice, "done: while omega was down")
			d.Push(signaltest.Message{From: signalAlice, Text: "last one"})
			waitSignalReply(t, d, signalAlice, "done: last one")
			for _, text := range []string{"hello signal", "while the daemon restarts", "anyone there", "after the stall", "while omega was down"} {
				if n := countSignal(d, signalAlice, "done: "+text); n != 1 {
					t.Errorf("%q answered %d times", text, n)
				}
			}
			if n := countSignal(d, "+4915100000666", "pairing code"); n != 1 {
				t.Errorf("the stranger got %d pairing replies", n)
			}
		})
	}
}

func waitSignalReply(t *testing.T, d *signaltest.Server, chat, text string) {
	t.Helper()
	waitSlack(t, "a reply with "+text+" to "+chat, func() bool { return countSignal(d, chat, text) > 0 })
}

func countSignal(d *signaltest.Server, chat, text string) int {
	n := 0
	for _, m := range d.SentTo(chat) {
		if strings.Contains(m.Message, text) {
			n++
		}
	}
	return n
}

// `omega doctor` asks the signal-cli daemon whether it runs and which
// version it is, and says so when it is not there.
func TestDoctorChecksSignalDaemon(t *testing.T) {
	d := signaltest.New(t, signalBot)
	bin := buildOmega(t)
	run := func(url string) string {
		cmd := exec.Command(bin, "doctor")
		cmd.Env = append(os.Environ(), "OMEGA_DATA_DIR="+t.TempDir(), "OMEGA_DATABASE_URL=", "OMEGA_TELEGRAM_TOKEN=",
			"OMEGA_WHATSAPP_ENABLED=", "OMEGA_CLAUDE_BIN="+filepath.Join(t.TempDir(), "no-such-claude"),
			"OMEGA_SIGNAL_URL="+url, "OMEGA_SIGNAL_ACCOUNT="+signalBot, "OMEGA_SIGNAL_ALLOWED_NUMBERS="+signalAlice)
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	if report := run(d.URL); !strings.Contains(report, "ok    signal     signal-cli 0.13.99-signaltest daemon at "+d.URL+" for "+signalBot) {
		t.Errorf("report:\n%s", report)
	}
	d.Stop()
	if report := run(d.URL); !strings.Contains(report, "FAIL  signal     signal-cli daemon at "+d.URL) || !strings.Contains(report, "signal-cli -a "+signalBot+" daemon --http") {
		t.Errorf("report with the daemon down:\n%s", report)
	}
}
