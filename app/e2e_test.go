package app_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/handlers/senders"
)

// A ten-message conversation over the HTTP channel: the first call carries
// the whole context, later ones resume the provider session with the
// minimal prompt; read models and a verified replay agree with the log.
func TestConversationOverHTTP(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			claude, callLog := fakeClaude(t)
			testchat := &fakeChannel{name: "testchat"}
			vars := baseVars(t, b, claude)
			vars["OMEGA_PAIRING_ENABLED"] = "false" // strangers are only denied
			n := startNode(t, vars, testchat)
			ctx := context.Background()

			if err := n.rt.Senders.RecordFact(ctx, &senders.RecordFact{Channel: "http", SenderID: "ana", Key: "city", Value: "Lisbon"}); err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= 10; i++ {
				out := say(t, n, "ana", fmt.Sprintf("message number %d", i), "20s")
				if out.Status != turn.StatusOK || out.Reply != fmt.Sprintf("echo: message number %d", i) {
					t.Fatalf("message %d: %+v", i, out)
				}
			}
			lines := calls(t, callLog)
			if len(lines) != 10 {
				t.Fatalf("provider called %d times, want 10:\n%s", len(lines), strings.Join(lines, "\n"))
			}
			first := strings.Fields(lines[0])
			second := strings.Fields(lines[1])
			if first[0] != "-" || second[0] == "-" {
				t.Fatalf("first call should start a session and the second resume it:\n%s\n%s", lines[0], lines[1])
			}
			var firstSize, secondSize int
			fmt.Sscan(first[1], &firstSize)
			fmt.Sscan(second[1], &secondSize)
			if secondSize*2 > firstSize {
				t.Fatalf("the resumed prompt (%d bytes) is not minimal next to the first (%d bytes)", secondSize, firstSize)
			}
			for _, l := range lines[1:] {
				if strings.Fields(l)[0] != second[0] {
					t.Fatalf("session changed mid-conversation: %s", l)
				}
			}

			// A stranger on a channel with an allowlist is denied, answered
			// and audited; an allowlisted sender is answered.
			if err := n.rt.Deliver(ctx, channels.Incoming{Channel: "testchat", SenderID: "stranger", Text: "let me in"}); err != nil {
				t.Fatal(err)
			}
			if err := n.rt.Deliver(ctx, channels.Incoming{Channel: "testchat", SenderID: "allowed", Text: "hello there"}); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the stranger's answer", func() bool { return len(testchat.texts("stranger")) == 1 })
			waitFor(t, "the allowed sender's answer", func() bool { return len(testchat.texts("allowed")) == 2 }) // welcome + reply
			if got := testchat.texts("stranger")[0]; got != i18n.Text(i18n.English, i18n.AccessDenied) {
				t.Fatalf("deny message = %q", got)
			}

			if err := n.rt.WaitIdle(ctx); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "read models", func() bool {
				return queryInt(t, n, `SELECT count(*) FROM audit`) == 12
			})
			// The facts and sessions read models follow the log on their own.
			if err := n.rt.Engine.CatchUp(ctx); err != nil {
				t.Fatal(err)
			}
			if got := queryInt(t, n, `SELECT count(*) FROM audit WHERE channel = 'http' AND status = 'ok' AND provider = 'claude-code' AND model <> '' AND duration_ms >= 0 AND prompt_bytes > 0 AND reply_bytes > 0`); got != 10 {
				t.Fatalf("%d complete ok audit rows for ana, want 10", got)
			}
			if got := queryInt(t, n, `SELECT count(*) FROM audit WHERE channel = 'testchat' AND sender_id = 'stranger' AND status = 'denied'`); got != 1 {
				t.Fatalf("denied audit rows = %d", got)
			}
			if got := queryInt(t, n, `SELECT count(DISTINCT conversation_id) FROM messages WHERE sender = 'http-ana'`); got != 1 {
				t.Fatalf("ana's messages are in %d conversations", got)
			}
			if got := queryInt(t, n, `SELECT count(*) FROM messages WHERE sender = 'http-ana'`); got != 20 {
				t.Fatalf("ana has %d messages, want 20", got)
			}
			if got := queryInt(t, n, `SELECT count(*) FROM provider_sessions WHERE sender = 'http-ana' AND session_id <> ''`); got != 1 {
				t.Fatalf("ana has %d provider sessions", got)
			}
			if got := queryInt(t, n, `SELECT count(*) FROM facts WHERE sender = 'http-ana' AND key = 'city' AND value = 'Lisbon'`); got != 1 {
				t.Fatalf("fact rows = %d", got)
			}

			ps, _ := n.rt.Engine.Select()
			diffs, err := n.rt.Engine.Verify(ctx, ps, nil)
			if err != nil || len(diffs) != 0 {
				t.Fatalf("replay --verify after the conversation: %v %v", diffs, err)
			}
		})
	}
}

// Five messages from one sender at once run in arrival order, the last
// four acknowledged while they wait; twenty senders at once all get answers.
func TestOrderAndConcurrency(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			claude, _ := fakeClaude(t)
			n := startNode(t, baseVars(t, b, claude))
			var ids []string
			for i := 1; i <= 5; i++ {
				out := say(t, n, "bob", fmt.Sprintf("slow task %d", i), "0s")
				ids = append(ids, out.TurnID)
			}
			for i, id := range ids {
				if out := get(t, n.url+"/api/turns/"+id+"?wait=30s"); out.Status != turn.StatusOK || out.Reply != fmt.Sprintf("echo: slow task %d", i+1) {
					t.Fatalf("turn %d: %+v", i+1, out)
				}
			}
			waitFor(t, "bob's turns", func() bool {
				for _, id := range ids {
					if countType(turnEvents(t, n, id), completed) != 1 {
						return false
					}
				}
				return true
			})
			var prevCompleted time.Time
			acks := 0
			for i, id := range ids {
				evs := turnEvents(t, n, id)
				acks += countType(evs, "AckSent")
				if c := countType(evs, "ProviderCalled"); c != 1 {
					t.Fatalf("turn %d called the provider %d times", i+1, c)
				}
				var called, completedAt time.Time
				for _, e := range evs {
					switch e.Type {
					case "ProviderCalled":
						called = e.RecordedAt
					case completed:
						completedAt = e.RecordedAt
					}
				}
				if called.Before(prevCompleted) {
					t.Fatalf("turn %d started before turn %d finished", i+1, i)
				}
				prevCompleted = completedAt
			}
			if acks != 4 {
				t.Fatalf("%d acknowledgements, want 4", acks)
			}

			var wg sync.WaitGroup
			errs := make(chan error, 20)
			for s := 0; s < 20; s++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					out := say(t, n, fmt.Sprintf("crowd-%d", s), "hi", "30s")
					if out.Status != turn.StatusOK || out.Reply != "echo: hi" {
						errs <- fmt.Errorf("sender %d: %+v", s, out)
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}

// Two omega processes on one PostgreSQL database share the work without
// running any turn twice, and one sender's turns stay in order.
func TestTwoProcessesOnPostgres(t *testing.T) {
	b := backends()[1]
	claude, callLog := fakeClaude(t)
	vars := baseVars(t, b, claude)
	n1 := startNode(t, vars)
	vars2 := map[string]string{}
	for k, v := range vars {
		vars2[k] = v
	}
	vars2["OMEGA_DATA_DIR"] = t.TempDir()
	n2 := startNode(t, vars2)

	var ids []string
	for i := 0; i < 12; i++ {
		target := n1
		if i%2 == 1 {
			target = n2
		}
		ids = append(ids, say(t, target, fmt.Sprintf("user-%d", i%3), fmt.Sprintf("slow job %d", i), "0s").TurnID)
	}
	waitFor(t, "all turns", func() bool {
		for _, id := range ids {
			if countType(turnEvents(t, n1, id), completed) != 1 {
				return false
			}
		}
		return true
	})
	if got := len(calls(t, callLog)); got != len(ids) {
		t.Fatalf("provider called %d times for %d turns", got, len(ids))
	}
	last := map[string]time.Time{}
	for i, id := range ids {
		evs := turnEvents(t, n1, id)
		if c := countType(evs, "ProviderCalled"); c != 1 {
			t.Fatalf("turn %d ran the provider %d times", i, c)
		}
		sender := fmt.Sprintf("user-%d", i%3)
		for _, e := range evs {
			if e.Type == "ProviderCalled" && e.RecordedAt.Before(last[sender]) {
				t.Fatalf("turn %d of %s started before its predecessor finished", i, sender)
			}
			if e.Type == completed {
				last[sender] = e.RecordedAt
			}
		}
	}
}
