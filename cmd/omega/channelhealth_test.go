package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
)

const healthToken = "123456:ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghi"

// omega serve against the Bot API double through an outage and a stalled
// poll: /readyz names the channel while it cannot receive, the owner is
// told once it stays down past OMEGA_CHANNEL_DOWN_ALERT, the first
// message after the API answers again is answered, /readyz is ready again
// and /metrics counts the outage and the stall from the recorded events.
func TestServeTelegramOutageAndStall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildOmega(t)
	for _, b := range storeBackends() {
		t.Run(b.name, func(t *testing.T) {
			api := telegramtest.New(t, healthToken)
			api.Outage("getUpdates", http.StatusBadGateway)
			vars, open := b.env(t)
			e := newShutdownEnv(t, vars, open)
			startServe(t, bin, append(e.env, "OMEGA_TELEGRAM_TOKEN="+healthToken, "OMEGA_TELEGRAM_API_URL="+api.URL,
				"OMEGA_TELEGRAM_ALLOWED_USERS=42", "OMEGA_TELEGRAM_POLL_TIMEOUT=1s", "OMEGA_TELEGRAM_STALL_GRACE=1s",
				"OMEGA_TELEGRAM_BACKOFF_MAX=1s", "OMEGA_CHANNEL_DOWN_ALERT=1s"))
			waitHTTP(t, e.url)

			waitReadyz(t, e.url, http.StatusOK, "ready, degraded\nchannel telegram: down")
			waitPage(t, e.url+"/ui/", `data-channel="telegram">telegram: down for `)
			waitOwnerMessage(t, api, "telegram has not received messages")
			api.EndOutage("getUpdates")
			api.PushText(42, 42, "anyone there")
			waitOwnerMessage(t, api, "telegram is receiving messages again")
			waitOwnerMessage(t, api, "done: anyone there")
			waitReadyzExactly(t, e.url, "ready\n")
			waitPage(t, e.url+"/ui/", `data-channel="telegram">telegram: receiving<`)

			api.StallUpdates(true)
			waitReadyz(t, e.url, http.StatusOK, "ready, degraded\nchannel telegram: stalled")
			waitPage(t, e.url+"/ui/", `data-channel="telegram">telegram: stalled for `)
			api.StallUpdates(false)
			waitReadyzExactly(t, e.url, "ready\n")
			waitMetrics(t, e.url, `omega_channel_up{channel="telegram"} 1`,
				`omega_channel_failures_total{channel="telegram",state="down"} 1`,
				`omega_channel_failures_total{channel="telegram",state="stalled"} 1`)
		})
	}
}

// waitPage waits for the page at url (served to a loopback client
// without a token) to contain text.
func waitPage(t *testing.T, url, text string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, b := httpBody(t, url)
		if c == http.StatusOK && strings.Contains(b, text) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s = %d, want it to contain %q:\n%s", url, c, text, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitReadyzExactly waits for a ready probe that names no channel.
func waitReadyzExactly(t *testing.T, url, body string) {
	t.Helper()
	waitReadyz(t, url, http.StatusOK, body)
	if _, b := httpBody(t, url+"/readyz"); b != body {
		t.Fatalf("/readyz body %q, want exactly %q", b, body)
	}
}

func waitReadyz(t *testing.T, url string, code int, body string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, b := httpBody(t, url+"/readyz")
		if c == code && strings.Contains(b, body) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz = %d %q, want %d with %q", c, b, code, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitOwnerMessage waits for a message to the owner (chat 42) containing text.
func waitOwnerMessage(t *testing.T, api *telegramtest.Server, text string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var got []string
		for _, m := range api.Messages(42) {
			if strings.Contains(m.Text, text) {
				return
			}
			got = append(got, m.Text)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no message with %q to the owner; got %q", text, got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func waitMetrics(t *testing.T, url string, series ...string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, body := httpBody(t, url+"/metrics")
		missing := ""
		for _, s := range series {
			if !strings.Contains(body, s) {
				missing = s
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics lacks %s:\n%s", missing, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
