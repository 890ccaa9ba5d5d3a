package app_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/api/audit"
	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/telegram"
	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
	"github.com/omega-gateway/omega/channels/whatsapp"
	"github.com/omega-gateway/omega/channels/whatsapp/whatsapptest"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/handlers/intake"
	"github.com/omega-gateway/omega/handlers/pipeline"
)

// buildOmegaCLI builds the omega binary a person runs.
func buildOmegaCLI(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := filepath.Join(t.TempDir(), "omega")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/omega").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// userEnv is the environment of a person's shell pointed at a node's
// store: no allowlist, no channel, no time zone, no provider.
func userEnv(t *testing.T, vars map[string]string, extra ...string) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "OMEGA_DATA_DIR=" + vars["OMEGA_DATA_DIR"]}
	if dsn := vars["OMEGA_DATABASE_URL"]; dsn != "" {
		env = append(env, "OMEGA_DATABASE_URL="+dsn)
	}
	return append(env, extra...)
}

// omegaRun runs the binary and returns what it printed on stdout (its
// log goes to stderr, shown when it fails to run) and its exit status.
func omegaRun(t *testing.T, bin string, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	out, err := cmd.Output()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() > 0:
		t.Logf("omega %s: exit %d; stderr:\n%s", strings.Join(args, " "), ee.ExitCode(), ee.Stderr)
		return string(out), ee.ExitCode()
	case err != nil:
		t.Fatalf("omega %s: %v", strings.Join(args, " "), err)
	}
	return string(out), 0
}

// Turns of every kind on every channel, recorded by a node with
// allowlists, pairing, an owner on Telegram and a time zone, re-run
// identical with the built binary from a shell that configures none of
// them: allowlisted, paired and unknown Telegram senders, a pairing
// command, bug report and limitation alerts to the owner (from Telegram
// and from WhatsApp), WhatsApp and HTTP turns. The 8 characters omega
// audit prints name a turn; a changed prompt prints one line per
// differing turn naming the change, and --out holds unified diffs of the
// changed lines only.
func TestRerunCLIEveryChannelIdentical(t *testing.T) {
	bin := buildOmegaCLI(t)
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			claude, _ := scriptedClaude(t, map[string]string{
				"reminder broke": `Sorry about that.\nBUG_REPORT: the reminder fired twice`,
				"calendar":       `I cannot do that yet.\nLIMITATION: No calendar | I cannot read calendars | add a calendar tool`,
			})
			api := telegramtest.New(t, tgToken)
			vars := telegramVars(baseVars(t, b, claude), api, "42")
			vars["OMEGA_WHATSAPP_ENABLED"], vars["OMEGA_WHATSAPP_ALLOWED_NUMBERS"] = "true", "+49 151 1234 5678"
			vars["OMEGA_TIMEZONE"], vars["OMEGA_HEARTBEAT_ENABLED"] = "America/New_York", "false"
			cfg := loadConfig(t, vars)
			tg, err := telegram.New(telegram.From(cfg.Channels), quiet, telegram.WithPollTimeout(time.Second), telegram.WithSleep(shortSleep))
			if err != nil {
				t.Fatal(err)
			}
			fake := whatsapptest.New()
			wa := whatsapp.NewWithClient(whatsapp.From(cfg.Channels), fake, quiet)
			auth := &pipeline.Auth{Allowed: map[string][]string{telegram.Name: telegram.From(cfg.Channels).AllowedUserIDs(), whatsapp.Name: whatsapp.From(cfg.Channels).AllowedNumbers}}
			node := startNodeWith(t, vars, app.RuntimeOptions{Channels: []channels.Channel{tg, wa}, Auth: auth})
			n := &tgNode{rt: node.rt}

			var turns []string
			tgSay := func(from int64, text string) []domain.Event {
				id := tgTurnID(from, api.PushText(from, from, text))
				turns = append(turns, id)
				return n.waitTurn(t, id)
			}
			waSay := func(id, text string) {
				waitFor(t, "the channel to acknowledge "+id, func() bool {
					ok, err := fake.Deliver(whatsapptest.TextFrom(id, "4915112345678", text))
					if err != nil {
						t.Fatal(err)
					}
					return ok
				})
				tn := intake.TurnID(channels.Incoming{Channel: whatsapp.Name, PlatformID: id})
				turns = append(turns, tn)
				n.waitTurn(t, tn)
			}
			tgSay(42, "hello there")
			bug := tgSay(42, "my reminder broke")
			offer := payload[turn.AccessDenied](t, n, tgSay(99, "can I use you?")).Pairing
			if offer == nil {
				t.Fatal("the unknown sender got no pairing code")
			}
			tgSay(42, "/pair approve "+offer.Code)
			if got := payload[turn.AccessGranted](t, n, tgSay(99, "now answer me")).Reason; !strings.HasPrefix(got, "paired on telegram") {
				t.Fatalf("the paired sender: %q", got)
			}
			waSay("WAMSG1", "read my calendar")
			waSay("WAMSG2", "hello from whatsapp")
			turns = append(turns, say(t, node, "ops", "hello over http", "30s").TurnID)
			alerts := 0
			for _, m := range api.Messages(42) {
				if strings.Contains(m.Text, "the reminder fired twice") || strings.Contains(m.Text, "No calendar") {
					alerts++
				}
			}
			if alerts != 2 {
				t.Fatalf("the owner got %d alerts, want 2: %+v", alerts, api.Messages(42))
			}
			waitFor(t, "every turn in the audit", func() bool {
				return n.queryInt(t, `SELECT COUNT(*) FROM audit`) == len(turns)
			})
			node.stop()

			env := userEnv(t, vars)
			out, code := omegaRun(t, bin, env, "rerun", "--since", "1h")
			if want := fmt.Sprintf("%d of %d turns identical\n", len(turns), len(turns)); code != 0 || !strings.HasSuffix(out, want) {
				t.Fatalf("omega rerun --since 1h: exit %d, want %q:\n%s", code, want, out)
			}
			short := audit.ShortID(bug[0].StreamID[len("turn-"):])
			if out, code := omegaRun(t, bin, env, "rerun", short); code != 0 || out != "identical\n" {
				t.Fatalf("omega rerun %s: exit %d\n%s", short, code, out)
			}

			// A changed prompt: one line per turn that built a context,
			// and the full diffs in --out, a few lines each.
			prompts, dir := t.TempDir(), filepath.Join(t.TempDir(), "diffs")
			system, err := os.ReadFile(filepath.Join("..", "prompts", "defaults", "SYSTEM_PROMPT.md"))
			if err != nil {
				t.Fatal(err)
			}
			pirate := strings.Replace(string(system), "## Identity\n", "## Identity\nYou are a pirate.\n", 1)
			if err := os.WriteFile(filepath.Join(prompts, "SYSTEM_PROMPT.md"), []byte(pirate), 0o600); err != nil {
				t.Fatal(err)
			}
			out, code = omegaRun(t, bin, env, "rerun", "--since", "1h", "--prompts", prompts, "--out", dir)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			files, _ := os.ReadDir(dir)
			if code != 3 || len(files) == 0 || len(lines) != len(files)+2 {
				t.Fatalf("exit %d, %d diff files, %d lines:\n%q", code, len(files), len(lines), out)
			}
			for _, l := range lines[:len(files)] {
				if !strings.HasSuffix(l, "  differs: prompt") {
					t.Fatalf("summary line %q, want '<id>  differs: prompt'", l)
				}
			}
			if want := fmt.Sprintf("%d of %d turns identical, %d differ", len(turns)-len(files), len(turns), len(files)); lines[len(files)] != want {
				t.Fatalf("summary %q, want %q", lines[len(files)], want)
			}
			for _, f := range files {
				b, err := os.ReadFile(filepath.Join(dir, f.Name()))
				if err != nil {
					t.Fatal(err)
				}
				diff := string(b)
				if !strings.Contains(diff, "\n+    You are a pirate.\n") || strings.Count(diff, "\n") > 30 || !strings.HasPrefix(diff, "--- recorded\n+++ re-run\n@@ ") {
					t.Fatalf("%s is not a unified diff of the changed line:\n%s", f.Name(), diff)
				}
			}
		})
	}
}

// omega rerun --live of a turn that resumed a Claude Code session resumes
// a fork of it (--fork-session beside --resume): a what-if never writes
// into the person's session.
func TestRerunLiveForksTheSession(t *testing.T) {
	bin := buildOmegaCLI(t)
	b := backends()[0]
	dir := t.TempDir()
	args := filepath.Join(dir, "args.log")
	claude := filepath.Join(dir, "claude")
	script := `#!/bin/sh
cat >/dev/null 2>&1 # the prompt, when it comes on stdin
echo "$*" >> "` + args + `"
sess=sess-1
while [ $# -gt 0 ]; do [ "$1" = --resume ] && sess="$2"; shift; done
printf '{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"%s","num_turns":1}\n' "$sess"
`
	if err := os.WriteFile(claude, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	vars := baseVars(t, b, claude)
	node := startNode(t, vars)
	say(t, node, "ana", "first message", "30s")
	second := say(t, node, "ana", "second message", "30s")
	if called := payload[turn.ProviderCalled](t, &tgNode{rt: node.rt}, turnEvents(t, node, second.TurnID)); called.SessionID != "sess-1" {
		t.Fatalf("the second turn did not resume the session: %+v", called)
	}
	node.stop()
	if err := os.Remove(args); err != nil {
		t.Fatal(err)
	}

	out, code := omegaRun(t, bin, userEnv(t, vars, "OMEGA_CLAUDE_BIN="+claude), "rerun", second.TurnID, "--live")
	calls, err := os.ReadFile(args)
	if err != nil {
		t.Fatalf("the live re-run called no provider (exit %d):\n%s", code, out)
	}
	if !strings.Contains(string(calls), "--resume sess-1 --fork-session") {
		t.Fatalf("the live re-run resumed the recorded session without forking it:\n%s", calls)
	}
}
