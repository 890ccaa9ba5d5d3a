package app_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/api"
	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
	"github.com/omega-gateway/omega/domain"
	heartbeatdom "github.com/omega-gateway/omega/domain/heartbeat"
	"github.com/omega-gateway/omega/domain/learning"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/handlers/heartbeat"
)

// heartbeatClaude writes a Claude Code double for check-ins: a group whose
// prompt holds "NEEDSUSER" answers with a message for the user, any other
// group with HEARTBEAT_OK; a classification puts items 1-6 and 7-12 in two
// groups. Every prompt is appended to the returned log between "<<<" and
// ">>>" lines.
func heartbeatClaude(t *testing.T) (bin, promptLog string) {
	t.Helper()
	dir := t.TempDir()
	promptLog = filepath.Join(dir, "prompts.log")
	bin = writeClaude(t, dir, `printf '<<<\n%s\n>>>\n' "$prompt" >> "`+promptLog+`"
case "$prompt" in
  *"Group these heartbeat checklist items"*) result='health: 1, 2, 3, 4, 5, 6\nsystems: 7, 8, 9, 10, 11, 12' ;;
  *NEEDSUSER*) result='**Time to stretch!** You asked me to remind you.\nREWARD: +1 | health | stretch reminders help' ;;
  *) result='**HEARTBEAT_OK**' ;;
esac
printf '{"type":"result","subtype":"success","is_error":false,"result":"%s","session_id":"sess-1","num_turns":1}\n' "$result"
`)
	return bin, promptLog
}

// heartbeatNode runs omega against the Telegram double with a 2 s heartbeat.
func heartbeatNode(t *testing.T, b backend, extra map[string]string) (*tgNode, *telegramtest.Server, string) {
	t.Helper()
	bin, log := heartbeatClaude(t)
	api := telegramtest.New(t, tgToken)
	vars := telegramVars(baseVars(t, b, bin), api, "42")
	vars["OMEGA_HEARTBEAT_INTERVAL"] = "2s"
	vars["OMEGA_TIMEZONE"] = "UTC"
	for k, v := range extra {
		vars[k] = v
	}
	return startTelegramNode(t, vars), api, log
}

func setChecklist(t *testing.T, n *tgNode, scope string, ps ...domain.Payload) {
	t.Helper()
	evs, err := domain.NewEvents(domain.Metadata{CorrelationID: "test"}, ps...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.rt.Store.Append(context.Background(), heartbeatdom.HeartbeatStream(scope), eventstore.Any, evs...); err != nil {
		t.Fatal(err)
	}
}

// prompts returns the prompts the fake received.
func promptsOf(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range strings.Split(string(b), "<<<\n") {
		if p = strings.TrimSuffix(strings.TrimSpace(p), ">>>"); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// cycles returns the outcomes of the completed heartbeat cycles, in order.
func cycles(t *testing.T, n *tgNode) []string {
	t.Helper()
	evs, err := n.rt.Store.ReadAll(context.Background(), 0, 100000)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		if e.Type != (heartbeatdom.HeartbeatCycleCompleted{}).EventType() {
			continue
		}
		p, err := n.rt.Registry.Decode(e)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p.(heartbeatdom.HeartbeatCycleCompleted).Outcome)
	}
	return out
}

func heartbeatMessages(api *telegramtest.Server) []string {
	var out []string
	for _, c := range api.Messages(42) {
		out = append(out, c.Text)
	}
	return out
}

func TestHeartbeatEndToEnd(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			t.Run("empty checklist costs nothing", func(t *testing.T) {
				n, api, log := heartbeatNode(t, b, nil)
				time.Sleep(7 * time.Second) // three intervals and more
				if ps := promptsOf(t, log); len(ps) != 0 {
					t.Fatalf("provider called %d times with an empty checklist", len(ps))
				}
				if c := cycles(t, n); len(c) != 0 {
					t.Fatalf("cycles recorded with an empty checklist: %v", c)
				}
				if m := heartbeatMessages(api); len(m) != 0 {
					t.Fatalf("sent %q", m)
				}
			})
			t.Run("all OK sends nothing", func(t *testing.T) {
				n, api, log := heartbeatNode(t, b, nil)
				evs, _ := domain.NewEvents(domain.Metadata{CorrelationID: "test"}, learning.LessonLearned{Domain: "health", Rule: "LESSONMARK no nagging after noon"})
				if _, err := n.rt.Store.Append(context.Background(), learning.LearningStream(sender.SenderKey("telegram", "42")), eventstore.Any, evs...); err != nil {
					t.Fatal(err)
				}
				setChecklist(t, n, heartbeatdom.GlobalHeartbeat, heartbeatdom.HeartbeatItemAdded{Item: "Check the backups"})
				waitFor(t, "two cycles", func() bool { return len(cycles(t, n)) >= 2 })
				for _, o := range cycles(t, n) {
					if o != heartbeatdom.HeartbeatSuppressed {
						t.Fatalf("outcomes %v, want suppressed", cycles(t, n))
					}
				}
				if m := heartbeatMessages(api); len(m) != 0 {
					t.Fatalf("sent %q", m)
				}
				ps := promptsOf(t, log)
				if len(ps) < 2 || !strings.Contains(ps[0], "Check the backups") {
					t.Fatalf("prompts %q", ps)
				}
				// Enrichment comes first, so learned rules frame the checklist.
				if l, c := strings.Index(ps[0], "LESSONMARK"), strings.Index(ps[0], "Check the backups"); l < 0 || l > c {
					t.Fatalf("lesson not before the checklist:\n%s", ps[0])
				}
			})
			t.Run("an item that needs the user alerts once per cycle", func(t *testing.T) {
				n, api, _ := heartbeatNode(t, b, nil)
				setChecklist(t, n, heartbeatdom.GlobalHeartbeat, heartbeatdom.HeartbeatItemAdded{Item: "NEEDSUSER remind me to stretch"})
				waitFor(t, "three cycles", func() bool { return len(cycles(t, n)) >= 3 })
				time.Sleep(300 * time.Millisecond)
				sent := 0
				for _, o := range cycles(t, n) {
					if o == heartbeatdom.HeartbeatSent {
						sent++
					}
				}
				msgs := heartbeatMessages(api)
				if sent < 3 || len(msgs) < sent || len(msgs) > sent+1 {
					t.Fatalf("%d cycles sent, %d messages: %q", sent, len(msgs), msgs)
				}
				if !strings.Contains(msgs[0], "Time to stretch") || strings.Contains(msgs[0], "HEARTBEAT_OK") || strings.Contains(msgs[0], "REWARD") {
					t.Fatalf("alert %q", msgs[0])
				}
				// The group's markers were applied once each, tagged as the heartbeat's.
				var l learning.Learning
				if _, err := eventstore.Fold(context.Background(), n.rt.Store, n.rt.Registry, learning.LearningStream(sender.SenderKey("telegram", "42")), &l); err != nil {
					t.Fatal(err)
				}
				if len(l.Rewards) < sent || len(l.Rewards) > sent+1 || l.Rewards[0].Source != "heartbeat" {
					t.Fatalf("%d cycles sent, rewards %+v", sent, l.Rewards)
				}
			})
			t.Run("a suppressed section never reaches the provider", func(t *testing.T) {
				n, api, log := heartbeatNode(t, b, nil)
				setChecklist(t, n, heartbeatdom.GlobalHeartbeat,
					heartbeatdom.HeartbeatItemAdded{Item: "## TRADING — autonomous engine"},
					heartbeatdom.HeartbeatItemAdded{Item: "NEEDSUSER sell everything"},
					heartbeatdom.HeartbeatItemAdded{Item: "## HOME"},
					heartbeatdom.HeartbeatItemAdded{Item: "Water the plants"},
					heartbeatdom.HeartbeatSectionSuppressed{Section: "trading"})
				waitFor(t, "two cycles", func() bool { return len(cycles(t, n)) >= 2 })
				for _, p := range promptsOf(t, log) {
					if strings.Contains(p, "sell everything") || strings.Contains(p, "TRADING") {
						t.Fatalf("suppressed section in prompt:\n%s", p)
					}
					if !strings.Contains(p, "Water the plants") {
						t.Fatalf("prompt without the active section:\n%s", p)
					}
				}
				if m := heartbeatMessages(api); len(m) != 0 {
					t.Fatalf("sent %q", m)
				}
				api.PushText(42, 42, "/heartbeat")
				// The first contact is welcomed before the answer.
				waitFor(t, "/heartbeat answer", func() bool { return len(heartbeatMessages(api)) == 2 })
				report := heartbeatMessages(api)[1]
				for _, want := range []string{"Water the plants", "Next check-in:", "Suppressed sections: trading"} {
					if !strings.Contains(report, want) {
						t.Fatalf("/heartbeat says %q, want %q in it", report, want)
					}
				}
			})
			t.Run("outside active hours no cycle runs", func(t *testing.T) {
				now := time.Now().UTC()
				window := now.Add(2*time.Hour).Format("15:04") + "-" + now.Add(3*time.Hour).Format("15:04")
				n, api, log := heartbeatNode(t, b, map[string]string{"OMEGA_HEARTBEAT_ACTIVE_HOURS": window})
				setChecklist(t, n, heartbeatdom.GlobalHeartbeat, heartbeatdom.HeartbeatItemAdded{Item: "NEEDSUSER remind me"})
				time.Sleep(5 * time.Second)
				if ps := promptsOf(t, log); len(ps) != 0 {
					t.Fatalf("provider called outside active hours: %d", len(ps))
				}
				if len(cycles(t, n)) != 0 || len(heartbeatMessages(api)) != 0 {
					t.Fatal("a cycle ran outside active hours")
				}
			})
			t.Run("twelve items run as two groups", func(t *testing.T) {
				n, api, log := heartbeatNode(t, b, nil)
				var ps []domain.Payload
				for i := range 12 {
					item := "Check system " + string(rune('A'+i))
					if i == 2 {
						item = "NEEDSUSER drink water"
					}
					ps = append(ps, heartbeatdom.HeartbeatItemAdded{Item: item})
				}
				setChecklist(t, n, heartbeatdom.GlobalHeartbeat, ps...)
				waitFor(t, "one cycle", func() bool { return len(cycles(t, n)) >= 1 })
				got := promptsOf(t, log)
				if len(got) < 3 || !strings.Contains(got[0], "Group these heartbeat checklist items") {
					t.Fatalf("want a classification then two group calls, got %d prompts", len(got))
				}
				msgs := heartbeatMessages(api)
				if len(msgs) == 0 || !strings.Contains(msgs[0], "Time to stretch") {
					t.Fatalf("messages %q", msgs)
				}
			})
		})
	}
}

// The system prompt a turn records promises the heartbeat exactly when
// OMEGA_HEARTBEAT_ENABLED says it runs.
func TestSystemPromptFollowsHeartbeatSetting(t *testing.T) {
	b := backends()[0]
	for _, enabled := range []string{"true", "false"} {
		t.Run(enabled, func(t *testing.T) {
			bin, _ := fakeClaude(t)
			vars := baseVars(t, b, bin)
			vars["OMEGA_HEARTBEAT_ENABLED"] = enabled
			n := startNode(t, vars)
			// "heartbeat" in the message brings in the Meta section.
			out := say(t, n, "allowed", "how often does your heartbeat check in?", "30s")
			var system string
			for _, e := range turnEvents(t, n, out.TurnID) {
				if e.Type == (turn.ContextBuilt{}).EventType() {
					p, err := n.rt.Registry.Decode(e)
					if err != nil {
						t.Fatal(err)
					}
					full, err := n.rt.PromptTexts.Resolve(context.Background(), out.TurnID, p.(turn.ContextBuilt))
					if err != nil {
						t.Fatal(err)
					}
					system = full.System
				}
			}
			has := strings.Contains(system, "A heartbeat checks on things periodically")
			if has != (enabled == "true") {
				t.Fatalf("heartbeat enabled=%s, prompt mentions it: %v", enabled, has)
			}
			if enabled == "false" && strings.Contains(system, "HEARTBEAT_ADD") {
				t.Fatal("disabled heartbeat still taught in the prompt")
			}
			if n.rt.Heartbeat == nil && enabled == "true" || n.rt.Heartbeat != nil && enabled == "false" {
				t.Fatal("heartbeat runner does not follow the setting")
			}
		})
	}
}

// Two processes on one PostgreSQL run each slot exactly once: one cycle
// and one provider call per slot, whoever ran it.
func TestHeartbeatTwoProcessesOnPostgres(t *testing.T) {
	b := backends()[1]
	bin, log := heartbeatClaude(t)
	api := telegramtest.New(t, tgToken)
	vars := telegramVars(baseVars(t, b, bin), api, "42")
	vars["OMEGA_HEARTBEAT_INTERVAL"] = "1s"
	vars["OMEGA_TIMEZONE"] = "UTC"
	one := startTelegramNode(t, vars)
	startTelegramNode(t, vars) // a second process competes for every slot
	setChecklist(t, one, heartbeatdom.GlobalHeartbeat, heartbeatdom.HeartbeatItemAdded{Item: "Check the backups"})
	waitForWithin(t, "20 slots", 2*time.Minute, func() bool { return len(cycles(t, one)) >= 20 })
	// An empty checklist stops the cycles; let the last one finish.
	setChecklist(t, one, heartbeatdom.GlobalHeartbeat, heartbeatdom.HeartbeatItemRemoved{Keyword: "backups", Removed: []string{"Check the backups"}})
	time.Sleep(2500 * time.Millisecond)

	// Other packages' transactions on the cluster may hold the log's
	// horizon back; the count must see every slot's start.
	if err := one.rt.Store.Settle(t.Context()); err != nil {
		t.Fatal(err)
	}
	evs, err := one.rt.Store.ReadAll(context.Background(), 0, 100000)
	if err != nil {
		t.Fatal(err)
	}
	starts := map[string]int{}
	for _, e := range evs {
		if e.Type == (heartbeatdom.HeartbeatCycleStarted{}).EventType() {
			starts[e.StreamID]++
		}
	}
	calls := len(promptsOf(t, log))
	if len(starts) < 20 || calls != len(starts) {
		t.Fatalf("%d slots run, %d provider calls", len(starts), calls)
	}
	for stream, n := range starts {
		if n != 1 {
			t.Fatalf("%s started %d times", stream, n)
		}
	}
}

// HEARTBEAT.md files are imported into the log; a project with its own
// checklist runs after the global one, whose section named like it is left
// out; a project switched off rests.
func TestHeartbeatFilesAndProjects(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			bin, log := heartbeatClaude(t)
			api := telegramtest.New(t, tgToken)
			vars := telegramVars(baseVars(t, b, bin), api, "42")
			vars["OMEGA_HEARTBEAT_INTERVAL"] = "2s"
			dir := vars["OMEGA_DATA_DIR"]
			write := func(rel, text string) {
				p := filepath.Join(dir, rel)
				if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			write("prompts/HEARTBEAT.md", "# Mine\n## TRADER — desk\n- global trading item\n## HOME\n- Water the plants\n- water the PLANTS\n")
			write("projects/trader/HEARTBEAT.md", "- NEEDSUSER check BTC\n")
			write("projects/trader/ROLE.md", "ROLEMARK: you run the trading desk.\n")
			n := startTelegramNode(t, vars)
			waitFor(t, "an alert from the project", func() bool { return len(heartbeatMessages(api)) >= 1 })
			hb, err := (heartbeatChecklists(n)).Load(context.Background(), heartbeatdom.GlobalHeartbeat)
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{"## TRADER — desk", "global trading item", "## HOME", "Water the plants"}; strings.Join(hb.Items, "|") != strings.Join(want, "|") {
				t.Fatalf("imported %q", hb.Items)
			}
			var global, project int
			for _, p := range promptsOf(t, log) {
				switch {
				case strings.Contains(p, "global trading item"):
					t.Fatalf("a section named like a project reached the global check-in:\n%s", p)
				case strings.Contains(p, "Water the plants"):
					global++
					if strings.Contains(p, "ROLEMARK") {
						t.Fatalf("the project's role reached the global check-in")
					}
				case strings.Contains(p, "check BTC"):
					project++
					if !strings.Contains(p, "ROLEMARK") {
						t.Fatalf("project check-in without its ROLE.md:\n%s", p)
					}
				}
			}
			if global == 0 || project == 0 {
				t.Fatalf("global %d, project %d check-ins", global, project)
			}
			// /project off (recorded on the owner's stream) rests the project.
			evs, _ := domain.NewEvents(domain.Metadata{CorrelationID: "test"}, sender.ProjectDeactivated{Project: "trader"})
			if _, err := n.rt.Store.Append(context.Background(), sender.SenderStream("telegram", "42"), eventstore.Any, evs...); err != nil {
				t.Fatal(err)
			}
			time.Sleep(2500 * time.Millisecond) // a cycle in flight may finish
			before := len(heartbeatMessages(api))
			time.Sleep(5 * time.Second)
			if after := len(heartbeatMessages(api)); after != before {
				t.Fatalf("a deactivated project kept alerting: %d then %d", before, after)
			}
		})
	}
}

func heartbeatChecklists(n *tgNode) heartbeat.Checklists {
	return heartbeat.Checklists{Store: n.rt.Store, Registry: n.rt.Registry}
}

// With nobody to alert (HTTP only: no target, or a target whose channel
// does not run here), a check-in is not run: no provider call, no cycle
// and no undeliverable alert, and the log says why once. With a target
// the same checklist is called.
func TestHeartbeatWithoutTargetCallsNothing(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			for _, target := range []string{"", "telegram:42"} {
				t.Run("target="+target, func(t *testing.T) {
					bin, promptLog := heartbeatClaude(t)
					vars := baseVars(t, b, bin)
					vars["OMEGA_HEARTBEAT_INTERVAL"] = "1s"
					vars["OMEGA_TIMEZONE"] = "UTC"
					vars["OMEGA_HEARTBEAT_TARGET"] = target
					srv := &api.Server{Addr: "127.0.0.1:0", Logger: quiet}
					if _, err := srv.Listen(); err != nil {
						t.Fatal(err)
					}
					var logs syncBuffer
					logger := slog.New(slog.NewTextHandler(&logs, nil))
					n := startLoggedNode(t, loadConfig(t, vars), logger, app.RuntimeOptions{Channels: []channels.Channel{srv}}, nil)
					setChecklist(t, n, heartbeatdom.GlobalHeartbeat, heartbeatdom.HeartbeatItemAdded{Item: "NEEDSUSER remind me to stretch"})
					const why = "heartbeat: check-ins are skipped"
					waitFor(t, "a skipped or a called check-in", func() bool {
						return strings.Contains(logs.String(), why) || len(promptsOf(t, promptLog)) > 0
					})
					time.Sleep(3 * time.Second) // three more slots, each of which would call
					if ps := promptsOf(t, promptLog); len(ps) != 0 {
						t.Fatalf("provider called %d times with nobody to alert", len(ps))
					}
					if got := n.queryInt(t, `SELECT count(*) FROM events WHERE type IN ('HeartbeatCycleStarted', 'HeartbeatAlertFailed')`); got != 0 {
						t.Fatalf("%d cycle events recorded with nobody to alert", got)
					}
					if c := strings.Count(logs.String(), why); c != 1 {
						t.Fatalf("the reason logged %d times:\n%s", c, logs.String())
					}
				})
			}
		})
	}
}

// With a target the same configuration calls the provider at each slot.
func TestHeartbeatWithTargetCalls(t *testing.T) {
	n, _, promptLog := heartbeatNode(t, backends()[0], map[string]string{"OMEGA_HEARTBEAT_INTERVAL": "1s"})
	setChecklist(t, n, heartbeatdom.GlobalHeartbeat, heartbeatdom.HeartbeatItemAdded{Item: "NEEDSUSER remind me to stretch"})
	waitFor(t, "a check-in call", func() bool { return len(promptsOf(t, promptLog)) > 0 })
}
