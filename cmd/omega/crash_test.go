package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/eventstore/postgres"
	"github.com/omega-gateway/omega/eventstore/sqlite"
	"github.com/omega-gateway/omega/internal/freeport"
	"github.com/omega-gateway/omega/internal/pgtest"
)

// buildOmega compiles the binary once per test.
func buildOmega(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "omega")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// crashClaude answers slowly for "slow" prompts, logging each call first.
func crashClaude(t testing.TB, dir string) (bin, callLog string) {
	bin, callLog = filepath.Join(dir, "claude"), filepath.Join(dir, "calls.log")
	script := `#!/bin/sh
prompt=$(cat)
last=$(printf '%s' "$prompt" | tail -n 1 | tr -d '"\\' | sed 's/^\[User\]: //')
echo "$last" >> "` + callLog + `"
case "$prompt" in *slow*) sleep 2;; esac
printf '{"type":"result","subtype":"success","is_error":false,"result":"done: %s","session_id":"s-%s","num_turns":1}\n' "$last" "$$"
`
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, callLog
}

type proc struct {
	cmd *exec.Cmd
	log *bytes.Buffer
}

func startServe(t testing.TB, bin string, env []string) *proc {
	t.Helper()
	cmd := exec.Command(bin, "serve")
	cmd.Env = env
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, log: &buf}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("omega serve output:\n%s", buf.String())
		}
	})
	return p
}

func waitHTTP(t testing.TB, url string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(url + "/healthz")
		if err == nil {
			resp.Body.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("omega did not start: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func postMessage(t testing.TB, url, sender, text, wait string) map[string]any {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"sender_id": sender, "text": text})
	c := &http.Client{Timeout: 90 * time.Second}
	resp, err := c.Post(url+"/api/messages?wait="+wait, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("bad reply %s: %v", b, err)
	}
	return out
}

// storeBackend is a store for the binary's tests: the variables that
// select it and a way to open it from the test.
type storeBackend struct {
	name string
	env  func(t *testing.T) (vars []string, open func() eventstore.Store)
}

func storeBackends() []storeBackend {
	return []storeBackend{
		{"sqlite", func(t *testing.T) ([]string, func() eventstore.Store) {
			dir := t.TempDir()
			return []string{"OMEGA_DATA_DIR=" + dir}, func() eventstore.Store {
				s, err := sqlite.Open(context.Background(), filepath.Join(dir, "omega.db"), sqlite.Options{})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				return s
			}
		}},
		{"postgres", func(t *testing.T) ([]string, func() eventstore.Store) {
			_, vars, open := postgresEnv(t)
			return vars, open
		}},
	}
}

// postgresEnv is the postgres backend's environment, with its DSN.
func postgresEnv(t *testing.T) (dsn string, vars []string, open func() eventstore.Store) {
	dsn = pgtest.DSN(t)
	return dsn, []string{"OMEGA_DATA_DIR=" + t.TempDir(), "OMEGA_DATABASE_URL=" + dsn}, func() eventstore.Store {
		s, err := postgres.Open(context.Background(), dsn, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
}

// kill -9 while the provider is working on a turn, with another turn
// queued: after a restart both complete, the interrupted one with exactly
// one reply and the queued one untouched by the crash.
func TestCrashResume(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildOmega(t)
	for _, c := range storeBackends() {
		t.Run(c.name, func(t *testing.T) {
			vars, open := c.env(t)
			claude, callLog := crashClaude(t, t.TempDir())
			addr := freeport.Addr(t)
			url := "http://" + addr
			env := append(os.Environ(), vars...)
			// A lease TTL of an hour: the restarted process must resume its
			// turns because the leases are its own (its identity is kept in
			// the data directory), not because they expired.
			env = append(env, "OMEGA_CLAUDE_BIN="+claude, "OMEGA_HTTP_ADDR="+addr, "OMEGA_LEASE_TTL=1h", "OMEGA_STATUS_FIRST=0s", "OMEGA_CLASSIFY=false", "OMEGA_LOG_LEVEL=debug", "HOME="+t.TempDir())

			first := startServe(t, bin, env)
			waitHTTP(t, url)
			slow := postMessage(t, url, "carol", "a slow question", "0s")
			queued := postMessage(t, url, "carol", "and a quick one", "0s")
			other := postMessage(t, url, "dave", "slow too", "0s")
			// Wait until the provider is at work on carol's first turn.
			deadline := time.Now().Add(20 * time.Second)
			for {
				b, _ := os.ReadFile(callLog)
				if strings.Contains(string(b), "a slow question") {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("provider never called; calls: %q", b)
				}
				time.Sleep(10 * time.Millisecond)
			}
			if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = first.cmd.Wait()

			startServe(t, bin, env)
			waitHTTP(t, url)
			for _, tn := range []map[string]any{slow, queued, other} {
				id := tn["turn_id"].(string)
				resp, err := (&http.Client{Timeout: 60 * time.Second}).Get(url + "/api/turns/" + id + "?wait=45s")
				if err != nil {
					t.Fatal(err)
				}
				var out map[string]any
				json.NewDecoder(resp.Body).Decode(&out)
				resp.Body.Close()
				if out["status"] != "ok" {
					t.Fatalf("turn %s after restart: %v", id, out)
				}
			}

			s := open()
			for _, tn := range []map[string]any{slow, queued, other} {
				id := tn["turn_id"].(string)
				evs, err := s.Load(context.Background(), domain.TurnStream(id), 1)
				if err != nil {
					t.Fatal(err)
				}
				counts := map[string]int{}
				for _, e := range evs {
					counts[e.Type]++
				}
				if counts["MessageReceived"] != 1 || counts["ReplySent"] != 1 || counts[turn.TurnCompleted{}.EventType()] != 1 || counts["ProviderReplied"] != 1 {
					t.Fatalf("turn %s events: %v", id, counts)
				}
			}
			b, _ := os.ReadFile(callLog)
			calls := strings.Split(strings.TrimSpace(string(b)), "\n")
			count := func(text string) int {
				n := 0
				for _, c := range calls {
					if c == text {
						n++
					}
				}
				return n
			}
			// The interrupted call is repeated once (its reply was never
			// recorded); the others ran exactly once.
			if count("a slow question") != 2 || count("and a quick one") != 1 || count("slow too") > 2 {
				t.Fatalf("provider calls:\n%s", fmt.Sprint(strings.Join(calls, "\n")))
			}
		})
	}
}

// BenchmarkResumeAfterKill measures how soon a turn cut off by kill -9 in
// the middle of its provider call is resumed by an immediate restart of
// the built binary, with the default lease TTL (15 s). Figures are medians
// over b.N kills: restart-to-call-ms from starting the new process to the
// resumed provider call, ready-to-call-ms from its health check answering.
//
//	go test -run '^$' -bench ResumeAfterKill -benchtime 5x ./cmd/omega/
func BenchmarkResumeAfterKill(b *testing.B) {
	bin := buildOmega(b)
	backends := []struct {
		name string
		vars func(b *testing.B) []string
	}{
		{"sqlite", func(*testing.B) []string { return nil }},
		{"postgres", func(b *testing.B) []string { return []string{"OMEGA_DATABASE_URL=" + pgtest.DSN(b)} }},
	}
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			claude, callLog := crashClaude(b, b.TempDir())
			addr := freeport.Addr(b)
			url := "http://" + addr
			env := append(os.Environ(), be.vars(b)...)
			env = append(env, "OMEGA_DATA_DIR="+b.TempDir(), "OMEGA_CLAUDE_BIN="+claude, "OMEGA_HTTP_ADDR="+addr,
				"OMEGA_STATUS_FIRST=0s", "OMEGA_CLASSIFY=false", "HOME="+b.TempDir())
			var fromStart, fromReady []time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				first := startServe(b, bin, env)
				waitHTTP(b, url)
				text := fmt.Sprintf("slow question %d", i)
				tn := postMessage(b, url, fmt.Sprintf("kill-%d", i), text, "0s")
				waitCalls(b, callLog, text, 1)
				_ = first.cmd.Process.Signal(syscall.SIGKILL)
				_ = first.cmd.Wait()

				start := time.Now()
				second := startServe(b, bin, env)
				waitHTTP(b, url)
				ready := time.Now()
				waitCalls(b, callLog, text, 2)
				called := time.Now()
				fromStart, fromReady = append(fromStart, called.Sub(start)), append(fromReady, called.Sub(ready))

				resp, err := (&http.Client{Timeout: 60 * time.Second}).Get(url + "/api/turns/" + tn["turn_id"].(string) + "?wait=45s")
				if err != nil {
					b.Fatal(err)
				}
				resp.Body.Close()
				_ = second.cmd.Process.Signal(syscall.SIGTERM)
				_ = second.cmd.Wait()
			}
			b.StopTimer()
			b.ReportMetric(medianMs(fromStart), "restart-to-call-ms")
			b.ReportMetric(medianMs(fromReady), "ready-to-call-ms")
		})
	}
}

// waitCalls waits until the provider double has been called n times
// with text, polling its call log.
func waitCalls(tb testing.TB, callLog, text string, n int) {
	tb.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, _ := os.ReadFile(callLog)
		if strings.Count(string(b), text+"\n") >= n {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("provider called fewer than %d times with %q; calls: %q", n, text, b)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func medianMs(ds []time.Duration) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[len(s)/2].Microseconds()) / 1000
}
