package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
	"github.com/omega-gateway/omega/internal/freeport"
	"github.com/omega-gateway/omega/internal/pgtest"
)

// omega heartbeat changes the checklist by recording events; export and
// import round-trip through a HEARTBEAT.md.
func TestHeartbeatCLI(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			data := t.TempDir()
			t.Setenv("OMEGA_DATA_DIR", data)
			t.Setenv("OMEGA_DATABASE_URL", "")
			if backend == "postgres" {
				t.Setenv("OMEGA_DATABASE_URL", pgtest.DSN(t))
			}
			if out := runOmega(t, "heartbeat", "show"); !strings.Contains(out, "(interval: 30m0s, OMEGA_HEARTBEAT_INTERVAL)") || !strings.Contains(out, "The checklist is empty") {
				t.Fatalf("show before any item:\n%s", out)
			}
			runOmega(t, "heartbeat", "add", "Check", "the", "backups")
			runOmega(t, "heartbeat", "add", "check the BACKUPS") // a duplicate
			runOmega(t, "heartbeat", "add", "Water the plants")
			runOmega(t, "heartbeat", "interval", "15")
			runOmega(t, "heartbeat", "rm", "plants")
			runOmega(t, "heartbeat", "--project", "trader", "add", "Check BTC")
			out := runOmega(t, "heartbeat", "show")
			if !strings.Contains(out, "interval: 15 min") || !strings.Contains(out, "- Check the backups\n") || strings.Contains(out, "empty") ||
				strings.Contains(out, "plants") || strings.Contains(out, "BTC") || strings.Count(out, "backups") != 1 {
				t.Fatalf("show:\n%s", out)
			}
			file := filepath.Join(t.TempDir(), "HEARTBEAT.md")
			runOmega(t, "heartbeat", "--project", "trader", "export", file)
			if b, _ := os.ReadFile(file); string(b) != "- Check BTC\n" {
				t.Fatalf("export %q", b)
			}
			if err := os.WriteFile(file, []byte("## Money\n- check btc\n- Review stops\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if out := runOmega(t, "heartbeat", "--project", "trader", "import", file); !strings.Contains(out, "imported 2 new items") {
				t.Fatalf("import: %s", out)
			}
			if out := runOmega(t, "heartbeat", "--project", "trader", "export"); out != "- Check BTC\n\n## Money\n- Review stops\n" {
				t.Fatalf("after import: %q", out)
			}
		})
	}
}

// heartbeatCrashClaude classifies four items into a fast and a slow group;
// the slow group takes 3 s. Each call logs its kind; every group's reply
// removes its items, so later slots have nothing to do.
func heartbeatCrashClaude(t *testing.T, dir string) (bin, callLog string) {
	bin, callLog = filepath.Join(dir, "claude"), filepath.Join(dir, "calls.log")
	script := `#!/bin/sh
prompt=$(cat)
case "$prompt" in
  *"Group these heartbeat checklist items"*) echo classify >> "` + callLog + `"; result='fast: 1, 2\nslow: 3, 4' ;;
  *slowitem*) echo slow >> "` + callLog + `"; sleep 3; result='The slow check needs you.\nHEARTBEAT_REMOVE: slowitem' ;;
  *fastitem*) echo fast >> "` + callLog + `"; result='HEARTBEAT_OK\nHEARTBEAT_REMOVE: fastitem' ;;
  *) result='ok' ;;
esac
printf '{"type":"result","subtype":"success","is_error":false,"result":"%s","session_id":"s","num_turns":1}\n' "$result"
`
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, callLog
}

// kill -9 while a check-in's slow group is with the provider: after a
// restart the cycle completes, the group whose reply was recorded is not
// called again and the interrupted one is called once more.
func TestHeartbeatCrashResume(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildOmega(t)
	for _, c := range storeBackends() {
		t.Run(c.name, func(t *testing.T) {
			vars, open := c.env(t)
			claude, callLog := heartbeatCrashClaude(t, t.TempDir())
			addr := freeport.Addr(t)
			url := "http://" + addr
			env := append(os.Environ(), vars...)
			// Alerts go to the Telegram double: with no target to tell, no
			// check-in would be run at all.
			api := telegramtest.New(t, tgToken)
			env = append(env, "OMEGA_CLAUDE_BIN="+claude, "OMEGA_HTTP_ADDR="+addr, "OMEGA_HEARTBEAT_INTERVAL=20s",
				"OMEGA_TIMEZONE=UTC", "HOME="+t.TempDir(),
				"OMEGA_TELEGRAM_TOKEN="+tgToken, "OMEGA_TELEGRAM_API_URL="+api.URL, "OMEGA_TELEGRAM_ALLOWED_USERS=42")
			for _, v := range vars {
				if k, val, _ := strings.Cut(v, "="); k == "OMEGA_DATA_DIR" || k == "OMEGA_DATABASE_URL" {
					t.Setenv(k, val)
				}
			}
			for _, item := range []string{"fastitem one", "fastitem two", "slowitem three", "slowitem four"} {
				runOmega(t, "heartbeat", "add", item)
			}
			// Start just after a 20 s boundary, so the first slot runs at
			// once and the next is far enough away.
			for time.Now().Second()%20 != 0 {
				time.Sleep(100 * time.Millisecond)
			}
			first := startServe(t, bin, env)
			waitHTTP(t, url)
			waitLog(t, callLog, "slow")
			time.Sleep(500 * time.Millisecond) // the fast group's reply is recorded
			if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = first.cmd.Wait()
			startServe(t, bin, env)
			waitHTTP(t, url)

			s := open()
			var counts map[string]int
			var cycle string
			deadline := time.Now().Add(30 * time.Second)
			for {
				counts = map[string]int{}
				evs, err := s.ReadAll(context.Background(), 0, 10000)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range evs {
					counts[e.Type]++
					if e.Type == "HeartbeatCycleStarted" {
						cycle = e.StreamID
					}
				}
				if counts["HeartbeatCycleCompleted"] == 1 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("cycle not completed after restart: %v", counts)
				}
				time.Sleep(100 * time.Millisecond)
			}
			b, _ := os.ReadFile(callLog)
			calls := strings.Fields(string(b))
			n := func(kind string) int {
				c := 0
				for _, x := range calls {
					if x == kind {
						c++
					}
				}
				return c
			}
			if n("classify") != 1 || n("fast") != 1 || n("slow") != 2 {
				t.Fatalf("provider calls %q", calls)
			}
			if counts["HeartbeatCycleStarted"] != 1 || counts["HeartbeatCycleResumed"] != 1 || counts["HeartbeatAlertStarted"] != 1 {
				t.Fatalf("events %v", counts)
			}
			// The timeline shows the cycle like a turn.
			out := runOmega(t, "timeline", cycle)
			for _, want := range []string{"HeartbeatCycleStarted", "HeartbeatClassified", "HeartbeatGroupCalled", "HeartbeatCycleResumed",
				"HeartbeatGroupProcessed", "HeartbeatAlertSent", "HeartbeatCycleCompleted"} {
				if !strings.Contains(out, want) {
					t.Fatalf("timeline of %s lacks %s:\n%s", cycle, want, out)
				}
			}
		})
	}
}

func waitLog(t *testing.T, path, line string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(path)
		if strings.Contains(string(b), line) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%q never in %s: %q", line, path, b)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
