package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/summary"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/internal/freeport"
)

// shutdownClaude answers turns with "done: <last line>" (slowly for
// "slow" prompts), summaries with a fixed sentence (after 30 s while the
// file slow-summary exists in dir) and fact extractions with "none". It
// logs "summary", "facts" or the turn's last line per call.
func shutdownClaude(t *testing.T, dir string) (bin, callLog string) {
	bin, callLog = filepath.Join(dir, "claude"), filepath.Join(dir, "calls.log")
	script := `#!/bin/sh
prompt=$(cat)
last=$(printf '%s' "$prompt" | tail -n 1 | tr -d '"\\' | sed 's/^\[User\]: //')
case "$prompt" in
  *"Summarize the conversation below"*)
    echo summary >> "` + callLog + `"
    if [ -f "` + filepath.Join(dir, "slow-summary") + `" ]; then sleep 30; fi
    result="They said hello." ;;
  *"Extract durable personal facts"*)
    echo facts >> "` + callLog + `"
    result="none" ;;
  *)
    echo "$last" >> "` + callLog + `"
    case "$prompt" in *slow*) sleep 2;; esac
    result="done: $last" ;;
esac
printf '{"type":"result","subtype":"success","is_error":false,"result":"%s","session_id":"s-%s","num_turns":1}\n' "$result" "$$"
`
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, callLog
}

type shutdownEnv struct {
	env     []string
	url     string
	dir     string
	callLog string
	open    func() eventstore.Store
}

// eachShutdownBackend builds the binary once and runs test on each
// backend with a fresh environment whose server is already answering.
func eachShutdownBackend(t *testing.T, extra []string, test func(t *testing.T, bin string, e shutdownEnv, p *proc)) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildOmega(t)
	for _, b := range storeBackends() {
		t.Run(b.name, func(t *testing.T) {
			vars, open := b.env(t)
			e := newShutdownEnv(t, vars, open)
			p := startServe(t, bin, append(e.env, extra...))
			waitHTTP(t, e.url)
			test(t, bin, e, p)
		})
	}
}

func newShutdownEnv(t *testing.T, vars []string, open func() eventstore.Store) shutdownEnv {
	dir := t.TempDir()
	claude, callLog := shutdownClaude(t, dir)
	addr := freeport.Addr(t)
	env := append(os.Environ(), vars...)
	env = append(env, "OMEGA_CLAUDE_BIN="+claude, "OMEGA_HTTP_ADDR="+addr, "OMEGA_LEASE_TTL=1s", "OMEGA_STATUS_FIRST=0s",
		"OMEGA_CLASSIFY=false", "OMEGA_LOG_LEVEL=debug", "HOME="+t.TempDir())
	return shutdownEnv{env: env, url: "http://" + addr, dir: dir, callLog: callLog, open: open}
}

// exitOf waits for the process and returns its exit code, failing the
// test if it takes longer than within.
func exitOf(t *testing.T, p *proc, within time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(within):
		t.Fatalf("omega did not exit within %s", within)
		return -1
	}
}

func countCalls(t *testing.T, callLog, what string) int {
	b, _ := os.ReadFile(callLog)
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		if l == what {
			n++
		}
	}
	return n
}

// summaryOf returns the summary stream's events of the conversation the
// turn belongs to.
func summaryOf(t *testing.T, s eventstore.Store, tn string) []domain.Event {
	t.Helper()
	ctx := context.Background()
	evs, err := s.Load(ctx, domain.TurnStream(tn), 1)
	if err != nil {
		t.Fatal(err)
	}
	var c turn.ContextBuilt
	for _, e := range evs {
		if e.Type == "ContextBuilt" {
			_ = json.Unmarshal(e.Data, &c)
		}
	}
	if c.ConversationID == "" {
		t.Fatalf("turn %s built no context", tn)
	}
	evs, err = s.Load(ctx, summary.SummaryStream(c.ConversationID), 1)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func typeCounts(evs []domain.Event) map[string]int {
	counts := map[string]int{}
	for _, e := range evs {
		counts[e.Type]++
	}
	return counts
}

// SIGTERM with an active conversation: it is summarized before the
// process exits, with status 0.
func TestShutdownSummarizesActiveConversation(t *testing.T) {
	eachShutdownBackend(t, nil, func(t *testing.T, bin string, e shutdownEnv, p *proc) {
		tn := postMessage(t, e.url, "erin", "hello", "20s")
		if tn["status"] != "ok" {
			t.Fatalf("turn: %v", tn)
		}
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if code := exitOf(t, p, 20*time.Second); code != 0 {
			t.Fatalf("exit status %d", code)
		}
		counts := typeCounts(summaryOf(t, e.open(), tn["turn_id"].(string)))
		if counts["SummaryWritten"] != 1 || counts["ConversationClosed"] != 1 || countCalls(t, e.callLog, "summary") != 1 {
			t.Fatalf("summary events %v, summary calls %d", counts, countCalls(t, e.callLog, "summary"))
		}
		if !strings.Contains(p.log.String(), "reason=shutdown") {
			t.Fatalf("no shutdown summary in the log:\n%s", p.log)
		}
	})
}

// A summary slower than OMEGA_SHUTDOWN_TIMEOUT is abandoned at the bound
// (exit 0); a second signal exits at once (status 130). Neither records a
// summary it did not get, and the next start with the conversation idle
// summarizes it once.
func TestShutdownBoundAndSecondSignal(t *testing.T) {
	eachShutdownBackend(t, []string{"OMEGA_SHUTDOWN_TIMEOUT=2s"}, func(t *testing.T, bin string, e shutdownEnv, p *proc) {
		if err := os.WriteFile(filepath.Join(e.dir, "slow-summary"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		tn := postMessage(t, e.url, "finn", "hello", "20s")
		start := time.Now()
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if code := exitOf(t, p, 15*time.Second); code != 0 {
			t.Fatalf("exit status at the bound: %d", code)
		}
		if took := time.Since(start); took < 2*time.Second {
			t.Fatalf("exited after %s, before the bound with a summary in progress", took)
		}

		p = startServe(t, bin, e.env)
		waitHTTP(t, e.url)
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		waitCalls(t, e.callLog, "summary", 2)
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if code := exitOf(t, p, 5*time.Second); code != exitInterrupted {
			t.Fatalf("exit status after a second signal: %d", code)
		}
		s := e.open()
		counts := typeCounts(summaryOf(t, s, tn["turn_id"].(string)))
		if counts["SummaryRequested"] != 1 || counts["SummaryWritten"] != 0 || counts["ConversationClosed"] != 0 {
			t.Fatalf("after two interrupted shutdowns: %v", counts)
		}

		if err := os.Remove(filepath.Join(e.dir, "slow-summary")); err != nil {
			t.Fatal(err)
		}
		startServe(t, bin, append(e.env, "OMEGA_CONVERSATION_IDLE=1s"))
		waitHTTP(t, e.url)
		deadline := time.Now().Add(30 * time.Second)
		for typeCounts(summaryOf(t, s, tn["turn_id"].(string)))["ConversationClosed"] == 0 {
			if time.Now().After(deadline) {
				t.Fatal("the conversation was not summarized after the restart")
			}
			time.Sleep(50 * time.Millisecond)
		}
		counts = typeCounts(summaryOf(t, s, tn["turn_id"].(string)))
		if counts["SummaryRequested"] != 1 || counts["SummaryWritten"] != 1 || counts["ConversationClosed"] != 1 {
			t.Fatalf("after the restart: %v", counts)
		}
	})
}

// A turn in flight at SIGTERM stops at its last recorded step; the
// process exits 0 and the turn completes after the restart with one reply.
func TestShutdownTurnInFlightCompletesAfterRestart(t *testing.T) {
	eachShutdownBackend(t, nil, func(t *testing.T, bin string, e shutdownEnv, p *proc) {
		tn := postMessage(t, e.url, "gus", "a slow question", "0s")
		waitCalls(t, e.callLog, "a slow question", 1)
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if code := exitOf(t, p, 20*time.Second); code != 0 {
			t.Fatalf("exit status %d", code)
		}
		startServe(t, bin, e.env)
		waitHTTP(t, e.url)
		id := tn["turn_id"].(string)
		resp, err := (&http.Client{Timeout: 60 * time.Second}).Get(e.url + "/api/turns/" + id + "?wait=45s")
		if err != nil {
			t.Fatal(err)
		}
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if out["status"] != "ok" {
			t.Fatalf("turn after restart: %v", out)
		}
		evs, err := e.open().Load(context.Background(), domain.TurnStream(id), 1)
		if err != nil {
			t.Fatal(err)
		}
		if c := typeCounts(evs); c["ReplySent"] != 1 || c["ProviderReplied"] != 1 || c["TurnCompleted"] != 1 {
			t.Fatalf("turn events: %v", c)
		}
	})
}

// On PostgreSQL a transaction left open elsewhere in the database holds
// the log's readers back, so the read models may not show a turn that has
// answered. Shutdown waits for it (within the bound) and still summarizes
// the conversation that turn belongs to.
func TestShutdownSummarizesBehindAnOpenTransaction(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildOmega(t)
	dsn, vars, open := postgresEnv(t)
	e := newShutdownEnv(t, vars, open)
	p := startServe(t, bin, e.env)
	waitHTTP(t, e.url)

	answered := make(chan map[string]any, 1)
	go func() { answered <- postMessage(t, e.url, "hana", "a slow hello", "20s") }()
	// The transaction takes its id while the provider works, so the turn's
	// last events commit after it and stay behind the horizon.
	waitCalls(t, e.callLog, "a slow hello", 1)
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	held, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = held.Rollback() }()
	if _, err := held.Exec(`SELECT pg_current_xact_id()`); err != nil {
		t.Fatal(err)
	}
	tn := <-answered
	if tn["status"] != "ok" {
		t.Fatalf("turn: %v", tn)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if err := held.Rollback(); err != nil {
		t.Fatal(err)
	}
	if code := exitOf(t, p, 20*time.Second); code != 0 {
		t.Fatalf("exit status %d", code)
	}
	counts := typeCounts(summaryOf(t, e.open(), tn["turn_id"].(string)))
	if counts["SummaryWritten"] != 1 || counts["ConversationClosed"] != 1 {
		t.Fatalf("summary events %v:\n%s", counts, p.log)
	}
}
