package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/internal/freeport"
)

const tgToken = "123456:ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghi"

// A reminder that falls due while omega is killed (kill -9) arrives once
// after the restart, marked late, and the read models verify clean.
func TestReminderDueWhileKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildOmega(t)
	for _, b := range storeBackends() {
		t.Run(b.name, func(t *testing.T) {
			vars, open := b.env(t)
			dir := t.TempDir()
			claude := filepath.Join(dir, "claude")
			script := `#!/bin/sh
prompt=$(cat)
due=$(date -u -d '+4 seconds' +%Y-%m-%dT%H:%M:%SZ)
printf '{"type":"result","subtype":"success","is_error":false,"result":"Sure.\\nSCHEDULE: Call Juan | %s | once","session_id":"s-1","num_turns":1}\n' "$due"
`
			if err := os.WriteFile(claude, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			api := telegramtest.New(t, tgToken)
			addr := freeport.Addr(t)
			env := append(os.Environ(), vars...)
			env = append(env, "OMEGA_CLAUDE_BIN="+claude, "OMEGA_HTTP_ADDR="+addr, "OMEGA_LEASE_TTL=1s", "OMEGA_CLASSIFY=false",
				"OMEGA_TELEGRAM_TOKEN="+tgToken, "OMEGA_TELEGRAM_API_URL="+api.URL, "OMEGA_TELEGRAM_ALLOWED_USERS=42",
				"OMEGA_TASK_LATE_AFTER=1s", "OMEGA_TIMEZONE=UTC", "HOME="+t.TempDir())

			first := startServe(t, bin, env)
			waitHTTP(t, "http://"+addr)
			api.PushText(42, 42, "remind me to call Juan")
			waitMessage(t, api, "Reminder scheduled")
			if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = first.cmd.Wait()
			time.Sleep(6 * time.Second) // the reminder falls due while nothing runs

			second := startServe(t, bin, env)
			waitHTTP(t, "http://"+addr)
			got := waitMessage(t, api, "Reminder: Call Juan")
			if !strings.Contains(got, "(late: due ") {
				t.Fatalf("late reminder %q", got)
			}
			time.Sleep(time.Second)
			if n := countMessages(api, "Reminder: Call Juan"); n != 1 {
				t.Fatalf("reminder sent %d times", n)
			}
			if err := second.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = second.cmd.Wait()

			s := open()
			counts := taskEventCounts(t, s)
			if counts["TaskFired"] != 1 || counts["TaskDelivered"] != 1 || counts["TaskDeliveryStarted"] != 1 {
				t.Fatalf("task events %v", counts)
			}
			verify := exec.Command(bin, "replay", "--verify")
			verify.Env = env
			if out, err := verify.CombinedOutput(); err != nil {
				t.Fatalf("replay --verify: %v\n%s", err, out)
			}
		})
	}
}

func waitMessage(t *testing.T, api *telegramtest.Server, part string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, m := range api.Messages(42) {
			if strings.Contains(m.Text, part) {
				return m.Text
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no message containing %q; got %+v", part, api.Messages(42))
	return ""
}

func countMessages(api *telegramtest.Server, part string) int {
	n := 0
	for _, m := range api.Messages(42) {
		if strings.Contains(m.Text, part) {
			n++
		}
	}
	return n
}

// taskEventCounts counts the events of every task stream.
func taskEventCounts(t *testing.T, s eventstore.Store) map[string]int {
	t.Helper()
	evs := wholeLog(t, s)
	counts := map[string]int{}
	for _, e := range evs {
		if strings.HasPrefix(e.StreamID, "task-") {
			counts[e.Type]++
		}
	}
	return counts
}
