package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
)

// omega serve with the default stall grace and backoff cap against a Bot
// API double that answers 429 with retry_after on sendMessage and on
// getUpdates, then crashes mid-conversation (a reply pending, more
// messages sent while it is gone) and comes back on the same address:
// flood control is waited out as long as it asks, the channel is down
// while the API is gone and receiving again once it answers, and every
// message is answered exactly once.
func TestServeTelegramFloodControlAndRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildOmega(t)
	for _, b := range storeBackends() {
		t.Run(b.name, func(t *testing.T) {
			api := telegramtest.New(t, healthToken)
			vars, open := b.env(t)
			e := newShutdownEnv(t, vars, open)
			// Only the poll timeout is shortened (the double caps it at 5 s);
			// the stall grace and the backoff cap are the defaults.
			startServe(t, bin, append(e.env, "OMEGA_TELEGRAM_TOKEN="+healthToken, "OMEGA_TELEGRAM_API_URL="+api.URL,
				"OMEGA_TELEGRAM_ALLOWED_USERS=42", "OMEGA_TELEGRAM_POLL_TIMEOUT=1s"))
			waitHTTP(t, e.url)
			chat := conversation{t: t, api: api}

			chat.say("first")
			chat.answered("first")

			api.FailNext("sendMessage", 1, http.StatusTooManyRequests, 2)
			chat.say("flooded reply")
			chat.answered("flooded reply")
			waitedOut(t, api.Calls("sendMessage"), 2*time.Second)

			api.FailNext("getUpdates", 1, http.StatusTooManyRequests, 3)
			chat.say("flooded poll")
			chat.answered("flooded poll")
			chat.say("after the flooded poll")
			chat.answered("after the flooded poll")
			pollWaitedOut(t, api, 3*time.Second)

			// The API goes away while the reply to a slow message is pending.
			chat.say("slow one")
			waitCalled(t, e.callLog, "slow one")
			api.Stop()
			chat.say("sent while down")
			chat.say("also sent while down")
			waitReadyz(t, e.url, http.StatusOK, "ready, degraded\nchannel telegram: down")
			waitPage(t, e.url+"/ui/", `data-channel="telegram">telegram: down for `)
			// Past the backoff's cap (polls at 1, 3, 7, 12, 17 s), between
			// two polls.
			time.Sleep(13 * time.Second)
			back := time.Now()
			if err := api.Restart(); err != nil {
				t.Fatal(err)
			}
			for _, m := range []string{"slow one", "sent while down", "also sent while down"} {
				chat.answered(m)
			}
			if held := replyTo(t, api, "slow one"); held.At.Before(back) {
				t.Fatalf("the reply pending at the crash was sent at %v, before the API came back at %v", held.At, back)
			}
			waitReadyzExactly(t, e.url, "ready\n")
			waitPage(t, e.url+"/ui/", `data-channel="telegram">telegram: receiving<`)
			// The bar: receiving again within 5 s of the API answering (1 s
			// for the timer to fire on a loaded machine).
			again := firstPoll(t, api, back)
			t.Logf("first poll %v after the API answered again (backoff cap 5s)", again)
			if again > 6*time.Second {
				t.Fatalf("first poll %v after the API answered again, want within 5 s", again)
			}

			// A stall with the default grace: the 1 s poll plus 5 s.
			stalled := time.Now()
			api.StallUpdates(true)
			waitReadyz(t, e.url, http.StatusOK, "ready, degraded\nchannel telegram: stalled")
			t.Logf("stall shown on /readyz %v after getUpdates stopped answering (poll 1s + grace 5s)", time.Since(stalled))
			waitPage(t, e.url+"/ui/", `data-channel="telegram">telegram: stalled for `)
			api.StallUpdates(false)
			chat.say("after the stall")
			chat.answered("after the stall")
			waitReadyzExactly(t, e.url, "ready\n")
			// Down twice (the flooded poll, the crash), stalled once.
			waitMetrics(t, e.url, `omega_channel_up{channel="telegram"} 1`,
				`omega_channel_failures_total{channel="telegram",state="down"} 2`,
				`omega_channel_failures_total{channel="telegram",state="stalled"} 1`)

			time.Sleep(2 * time.Second) // room for a late duplicate
			chat.eachAnsweredOnce(e.callLog)
		})
	}
}

// replyTo returns the reply to text.
func replyTo(t *testing.T, api *telegramtest.Server, text string) telegramtest.Call {
	t.Helper()
	for _, m := range api.Messages(42) {
		if m.Text == "done: "+text {
			return m
		}
	}
	t.Fatalf("no reply to %q", text)
	return telegramtest.Call{}
}

// conversation is the owner (user 42) talking to the bot in a private chat.
type conversation struct {
	t    *testing.T
	api  *telegramtest.Server
	said []string
}

func (c *conversation) say(text string) {
	c.api.PushText(42, 42, text)
	c.said = append(c.said, text)
}

// answered waits for the reply to text.
func (c *conversation) answered(text string) {
	c.t.Helper()
	waitOwnerMessage(c.t, c.api, "done: "+text)
}

// eachAnsweredOnce checks that every message said got one reply and
// reached the provider once.
func (c *conversation) eachAnsweredOnce(callLog string) {
	c.t.Helper()
	for _, text := range c.said {
		replies := 0
		for _, m := range c.api.Messages(42) {
			if m.Text == "done: "+text {
				replies++
			}
		}
		if replies != 1 {
			c.t.Errorf("%q answered %d times, want once", text, replies)
		}
		if n := countCalls(c.t, callLog, text); n != 1 {
			c.t.Errorf("%q reached the provider %d times, want once", text, n)
		}
	}
}

// waitedOut checks that the call after each 429 came no sooner than the
// retry_after the 429 asked for.
func waitedOut(t *testing.T, calls []telegramtest.Call, retryAfter time.Duration) {
	t.Helper()
	for i, c := range calls {
		if !strings.HasPrefix(c.Error, "Too Many Requests") {
			continue
		}
		if i+1 == len(calls) {
			t.Fatalf("no %s call after the 429", c.Method)
		}
		if gap := calls[i+1].At.Sub(c.At); gap < retryAfter {
			t.Fatalf("%s called again %v after a 429 asking for %v", c.Method, gap, retryAfter)
		}
		return
	}
	t.Fatal("no 429 was answered")
}

// pollWaitedOut checks that after the 429 on getUpdates the next poll
// came no sooner than retry_after.
func pollWaitedOut(t *testing.T, api *telegramtest.Server, retryAfter time.Duration) {
	t.Helper()
	for _, c := range api.Calls("getUpdates") {
		if !strings.HasPrefix(c.Error, "Too Many Requests") {
			continue
		}
		if gap := firstPoll(t, api, c.At); gap < retryAfter {
			t.Fatalf("getUpdates called again %v after a 429 asking for %v", gap, retryAfter)
		}
		return
	}
	t.Fatal("no 429 was answered on getUpdates")
}

// firstPoll is how long after since the first getUpdates arrived.
func firstPoll(t *testing.T, api *telegramtest.Server, since time.Time) time.Duration {
	t.Helper()
	polls := api.PollsSince(since)
	if len(polls) == 0 {
		t.Fatal("no getUpdates after the API came back")
	}
	return polls[0].Sub(since)
}

func waitCalled(t *testing.T, callLog, text string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for countCalls(t, callLog, text) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%q never reached the provider", text)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
