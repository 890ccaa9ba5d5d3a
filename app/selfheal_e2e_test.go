package app_test

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
	"github.com/omega-gateway/omega/domain/selfheal"
	"github.com/omega-gateway/omega/eventstore"
)

// selfHealClaude writes a Claude Code double: "BREAK" opens a self-heal
// effort; follow-ups are counted in the returned file and the one of
// iteration resolveAt resolves (0: never), the others go on fixing.
func selfHealClaude(t *testing.T, resolveAt int) (bin, countFile string) {
	t.Helper()
	dir := t.TempDir()
	countFile = filepath.Join(dir, "followups")
	bin = writeClaude(t, dir, `case "$prompt" in
  *"Self-healing follow-up"*)
    echo x >> "`+countFile+`"
    n=$(printf '%s' "$prompt" | sed -n 's/.*iteration \([0-9]*\) of.*/\1/p' | head -n 1)
    if [ "$n" = "`+strconv.Itoa(resolveAt)+`" ]; then result='Fixed it.\nSELF_HEAL_RESOLVED'
    else result="Still broken.\nSELF_HEAL: restarted the service, attempt $n | curl localhost:8080/health"; fi ;;
  *BREAK*) result='The service is down, fixing.\nSELF_HEAL: service down | curl localhost:8080/health' ;;
  *) result="echo: $last" ;;
esac
printf '{"type":"result","subtype":"success","is_error":false,"result":"%s","session_id":"sess-1","num_turns":1}\n' "$result"
`)
	return bin, countFile
}

func selfHealEvents(t *testing.T, n *tgNode) map[string]int {
	t.Helper()
	evs, err := n.rt.Store.Load(context.Background(), selfheal.SelfHealStream, 1)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, e := range evs {
		out[e.Type]++
	}
	return out
}

func TestSelfHealEndToEnd(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			for _, c := range []struct {
				name      string
				resolveAt int
			}{{"never resolves: ten iterations and one escalation", 0}, {"resolves at the third follow-up", 3}} {
				t.Run(c.name, func(t *testing.T) {
					bin, count := selfHealClaude(t, c.resolveAt)
					api := telegramtest.New(t, tgToken)
					vars := telegramVars(baseVars(t, b, bin), api, "42")
					vars["OMEGA_SELF_HEAL_DELAY"] = "100ms"
					vars["OMEGA_HEARTBEAT_ENABLED"] = "false"
					n := startTelegramNode(t, vars)
					api.PushText(42, 42, "BREAK the service")
					// A restart in the middle of the effort changes nothing.
					waitFor(t, "two follow-ups", func() bool { return len(lines(t, count)) >= 2 })
					n.stop()
					n = startTelegramNode(t, vars)
					if c.resolveAt == 0 {
						waitFor(t, "escalation", func() bool { return selfHealEvents(t, n)["SelfHealOwnerNotified"] >= 1 })
					} else {
						waitFor(t, "resolution", func() bool { return selfHealEvents(t, n)["SelfHealResolved"] == 1 })
					}
					waitFor(t, "the effort to settle", func() bool { return selfHealSettled(t, n) })
					got := selfHealEvents(t, n)
					calls := len(lines(t, count))
					if c.resolveAt == 0 {
						if got["SelfHealFollowUpStarted"] != selfheal.MaxSelfHealIterations || got["SelfHealEscalated"] != 1 ||
							got["SelfHealOwnerNotified"] != 1 || got["SelfHealIterated"] != selfheal.MaxSelfHealIterations-1 {
							t.Fatalf("events %v", got)
						}
						// A call cut short by the restart may be made once more.
						if calls < selfheal.MaxSelfHealIterations || calls > selfheal.MaxSelfHealIterations+1 {
							t.Fatalf("%d follow-up calls", calls)
						}
						gaveUp := func() int {
							var n int
							for _, m := range heartbeatMessages(api) {
								if strings.Contains(m, "Self-healing gave up after 10 attempts") && strings.Contains(m, "attempt 9") {
									n++
								}
							}
							return n
						}
						// The escalation is recorded as sent before it is sent
						// (so that it goes once): wait for the message itself.
						waitFor(t, "the escalation message", func() bool { return gaveUp() >= 1 })
						if gaveUp := gaveUp(); gaveUp != 1 {
							t.Fatalf("escalations sent: %d of %q", gaveUp, heartbeatMessages(api))
						}
					} else if got["SelfHealFollowUpStarted"] != 3 || got["SelfHealIterated"] != 2 || got["SelfHealEscalated"] != 0 || calls > 4 {
						t.Fatalf("events %v, %d calls", got, calls)
					}
				})
			}
		})
	}
}

func selfHealSettled(t *testing.T, n *tgNode) bool {
	var st selfheal.SelfHeal
	if _, err := eventstore.Fold(context.Background(), n.rt.Store, n.rt.Registry, selfheal.SelfHealStream, &st); err != nil {
		t.Fatal(err)
	}
	return !st.Active || st.Notified
}

func lines(t *testing.T, path string) []string {
	t.Helper()
	var out []string
	for _, l := range calls(t, path) {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}
