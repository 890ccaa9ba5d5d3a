package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/internal/freeport"
	"github.com/omega-gateway/omega/providers/providertest"
)

// applierLocks returns, per process id, how many of the read models'
// locks of this database's schema it holds (the applier session names its
// process).
func applierLocks(t *testing.T, db *sql.DB) map[int]int {
	t.Helper()
	var names []string
	for _, p := range app.Projections() {
		names = append(names, p.Name())
	}
	rows, err := db.Query(`SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.granted AND l.classid = 28525
		AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND l.objid::bigint IN (SELECT hashtext(current_schema() || '/' || n)::bigint & 4294967295
			FROM unnest(string_to_array($1, ',')) AS n)`, strings.Join(names, ","))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int]int{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		var pid int
		if _, err := fmt.Sscanf(name, "omega applier pid %d", &pid); err != nil {
			t.Fatalf("lock held by %q", name)
		}
		out[pid]++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// cluster is a test's PostgreSQL database, the built binary and a fake
// Claude Code CLI, for starting `omega serve` processes that share them.
type cluster struct {
	bin, claude string
	vars        []string
	db          *sql.DB
}

func newCluster(t *testing.T) cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	c := cluster{bin: buildOmega(t)}
	var open func() eventstore.Store
	_, c.vars, open = postgresEnv(t)
	c.db = open().(interface{ DB() *sql.DB }).DB()
	c.claude, _ = crashClaude(t, t.TempDir())
	return c
}

// start starts a process answering through the fake CLI, with the extra
// settings, and returns it with its base URL once it answers.
func (c cluster) start(t *testing.T, extra ...string) (*proc, string) {
	t.Helper()
	return startClusterNode(t, c.bin, c.vars, append([]string{"OMEGA_CLAUDE_BIN=" + c.claude, "OMEGA_STATUS_FIRST=0s"}, extra...)...)
}

// startClusterNode starts `omega serve` on the test's database (vars)
// with its own data directory, address and home, and the extra settings;
// it returns the process and its base URL once it answers.
func startClusterNode(t *testing.T, bin string, vars []string, extra ...string) (*proc, string) {
	t.Helper()
	addr := freeport.Addr(t)
	env := append(os.Environ(), vars...)
	env = append(env, "OMEGA_DATA_DIR="+t.TempDir(), "OMEGA_HTTP_ADDR="+addr, "OMEGA_CLASSIFY=false", "HOME="+t.TempDir())
	p := startServe(t, bin, append(env, extra...))
	waitHTTP(t, "http://"+addr)
	return p, "http://" + addr
}

// waitOneApplier waits until one of pids holds every read model's lock
// and returns it.
func waitOneApplier(t *testing.T, db *sql.DB, within time.Duration, pids ...int) int {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		held := applierLocks(t, db)
		for _, pid := range pids {
			if held[pid] == len(app.Projections()) && len(held) == 1 {
				return pid
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("read-model locks held %v, want all by one of %v", held, pids)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Two `omega serve` processes on one PostgreSQL: every read model is
// applied by one of them. kill -9 of that process hands them all to the
// other within OMEGA_APPLIER_TTL, and its read models go on from their
// checkpoints: a sender's next turn, which waits for the read model to
// show the one before, completes there, and every turn shows completed.
func TestApplierKilledHandsOver(t *testing.T) {
	c := newCluster(t)
	db := c.db
	const ttl = 2 * time.Second
	start := func() (*proc, string) { return c.start(t, "OMEGA_APPLIER_TTL="+ttl.String()) }
	first, firstURL := start()
	second, secondURL := start()
	pids := map[int]string{first.cmd.Process.Pid: firstURL, second.cmd.Process.Pid: secondURL}
	applier := waitOneApplier(t, db, 10*time.Second, first.cmd.Process.Pid, second.cmd.Process.Pid)
	turns := 0
	for _, url := range pids {
		if out := postMessage(t, url, "erin", "hello", "30s"); out["status"] != "ok" {
			t.Fatalf("turn before the kill: %v", out)
		}
		turns++
	}

	killed := time.Now()
	p := first
	if applier == second.cmd.Process.Pid {
		p = second
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Wait()
	delete(pids, applier)
	var survivor int
	var url string
	for pid, u := range pids {
		survivor, url = pid, u
	}
	waitOneApplier(t, db, ttl, survivor)
	t.Logf("read models applied by the survivor %s after the kill", time.Since(killed).Round(time.Millisecond))

	for i := range 3 {
		if out := postMessage(t, url, "frank", fmt.Sprintf("question %d", i), "30s"); out["status"] != "ok" {
			t.Fatalf("turn %d after the kill: %v", i, out)
		}
		turns++
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var done int
		if err := db.QueryRowContext(context.Background(), `SELECT count(*) FROM turns WHERE status <> 'open'`).Scan(&done); err != nil {
			t.Fatal(err)
		}
		if done == turns {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the turns read model shows %d of %d turns completed", done, turns)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// An applier that hangs (SIGSTOP) keeps its connection open, so the
// server ends its session after its idle timeout: the other process then
// applies every read model, within OMEGA_APPLIER_TTL of the hang. When the
// hung process wakes it finds its session gone and applies nothing more;
// turns posted to both complete and the read models show them all.
func TestHungApplierHandsOver(t *testing.T) {
	c := newCluster(t)
	db := c.db
	const ttl = 2 * time.Second
	start := func() (*proc, string) { return c.start(t, "OMEGA_APPLIER_TTL="+ttl.String()) }
	first, firstURL := start()
	second, secondURL := start()
	applier := waitOneApplier(t, db, 10*time.Second, first.cmd.Process.Pid, second.cmd.Process.Pid)
	hung, other, otherURL := first, second, secondURL
	if applier == second.cmd.Process.Pid {
		hung, other, otherURL = second, first, firstURL
	}
	if err := hung.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	// Generous: the bound under test is the TTL, the slack is this
	// machine's load.
	waitOneApplier(t, db, 2*ttl, other.cmd.Process.Pid)
	took := time.Since(stopped)
	t.Logf("read models applied by the other process %s after the hang (TTL %s)", took.Round(time.Millisecond), ttl)
	if err := hung.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}

	turns := 0
	for i, url := range []string{otherURL, firstURL, secondURL} {
		if out := postMessage(t, url, fmt.Sprintf("gina-%d", i), "hello", "30s"); out["status"] != "ok" {
			t.Fatalf("turn %d after the hang: %v", i, out)
		}
		turns++
	}
	if held := applierLocks(t, db); len(held) != 1 || held[other.cmd.Process.Pid] != len(app.Projections()) {
		t.Fatalf("after the hung process woke, read-model locks are held %v, want all by %d", held, other.cmd.Process.Pid)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var done int
		if err := db.QueryRow(`SELECT count(*) FROM turns WHERE status <> 'open'`).Scan(&done); err != nil {
			t.Fatal(err)
		}
		if done == turns {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the turns read model shows %d of %d turns completed", done, turns)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A person's messages are answered while the process applying the read
// models hangs: the process that ran the person's last turn adds that
// turn's exchange to the next turn's history itself, so the conversation
// goes on, in order and with everything said before, and the read models
// catch up once the applier wakes.
func TestConversationGoesOnWhileTheApplierHangs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildOmega(t)
	_, vars, open := postgresEnv(t)
	db := open().(interface{ DB() *sql.DB }).DB()
	var (
		mu    sync.Mutex
		calls [][]providertest.Message
	)
	model := providertest.NewOpenAIServer(t, func(req providertest.ChatRequest) (int, string, map[string]string) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, req.Messages)
		return http.StatusOK, providertest.OpenAIReply(req.Model, fmt.Sprintf("answer %d", len(calls))), nil
	})
	start := func() (*proc, string) {
		// No hand-over while the test runs: the applier stays hung.
		return startClusterNode(t, bin, vars, "OMEGA_PROVIDER=openai", "OMEGA_OPENAI_BASE_URL="+model.URL,
			"OMEGA_OPENAI_API_KEY=test-key", "OMEGA_MODEL_FAST=m", "OMEGA_MODEL_COMPLEX=m", "OMEGA_APPLIER_TTL=2m")
	}
	first, firstURL := start()
	second, secondURL := start()
	applier := waitOneApplier(t, db, 10*time.Second, first.cmd.Process.Pid, second.cmd.Process.Pid)
	hung, otherURL := first, secondURL
	if applier == second.cmd.Process.Pid {
		hung, otherURL = second, firstURL
	}
	shown := func() int {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM turns WHERE status <> 'open'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if out := postMessage(t, otherURL, "hana", "hello", "30s"); out["status"] != "ok" {
		t.Fatalf("first message: %v", out)
	}
	for deadline := time.Now().Add(10 * time.Second); shown() < 1; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the read models never showed the first turn")
		}
	}

	if err := hung.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			if err := hung.cmd.Process.Signal(syscall.SIGCONT); err != nil {
				t.Error(err)
			}
		}
	}
	defer resume()
	for _, text := range []string{"one", "two", "three"} {
		if out := postMessage(t, otherURL, "hana", text, "30s"); out["status"] != "ok" {
			t.Fatalf("message %q while the applier hangs: %v", text, out)
		}
	}
	if n := shown(); n != 1 {
		t.Fatalf("the read models show %d turns completed while their applier hangs, want 1: the test shows nothing", n)
	}
	mu.Lock()
	var history []string
	for _, m := range calls[len(calls)-1] {
		if m.Role == "assistant" {
			history = append(history, m.Content)
		}
	}
	mu.Unlock()
	if got, want := strings.Join(history, "|"), "answer 1|answer 2|answer 3"; got != want {
		t.Errorf("the last message's history holds the replies %q, want %q", got, want)
	}

	resume()
	for deadline := time.Now().Add(20 * time.Second); shown() < 4; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the read models show %d of 4 turns completed after the applier woke", shown())
		}
	}
}
