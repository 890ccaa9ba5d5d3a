package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/eventstore/postgres"
	"github.com/omega-gateway/omega/internal/freeport"
	"github.com/omega-gateway/omega/internal/pgtest"
)

// outageDB is a database of its own on the test server, so that refusing
// its connections touches no other test's schema; it is dropped at the end.
type outageDB struct {
	admin *sql.DB
	name  string
	dsn   string
}

func newOutageDB(t *testing.T) *outageDB {
	t.Helper()
	pgtest.DSN(t) // skips the test when no server answers
	base := os.Getenv(pgtest.EnvURL)
	if base == "" {
		base = pgtest.DefaultURL
	}
	admin, err := sql.Open("postgres", base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	suffix := make([]byte, 6)
	if _, err := rand.Read(suffix); err != nil {
		t.Fatal(err)
	}
	d := &outageDB{admin: admin, name: "omega_outage_" + hex.EncodeToString(suffix)}
	if _, err := admin.Exec("CREATE DATABASE " + d.name); err != nil {
		t.Fatalf("create database %s: %v", d.name, err)
	}
	t.Cleanup(func() {
		if _, err := admin.Exec("DROP DATABASE IF EXISTS " + d.name + " WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", d.name, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("test database URL: %v", err)
	}
	u.Path = "/" + d.name
	d.dsn = u.String()
	return d
}

// refuse makes the database refuse new connections and ends every
// connection omega holds, for the given time.
func (d *outageDB) refuse(t *testing.T, outage time.Duration) {
	t.Helper()
	if _, err := d.admin.Exec("ALTER DATABASE " + d.name + " ALLOW_CONNECTIONS false"); err != nil {
		t.Fatal(err)
	}
	var ended int
	if err := d.admin.QueryRow(`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = $1`, d.name).Scan(&ended); err != nil {
		t.Fatal(err)
	}
	t.Logf("database %s refuses connections; %d connections ended", d.name, ended)
	time.Sleep(outage)
	if _, err := d.admin.Exec("ALTER DATABASE " + d.name + " ALLOW_CONNECTIONS true"); err != nil {
		t.Fatal(err)
	}
}

// outageClaude answers after a pause, so that turns are in flight when the
// database goes away.
func outageClaude(t *testing.T, dir string) string {
	bin := filepath.Join(dir, "claude")
	script := `#!/bin/sh
prompt=$(cat)
last=$(printf '%s' "$prompt" | tail -n 1 | tr -d '"\\' | sed 's/^\[User\]: //')
sleep 0.3
printf '{"type":"result","subtype":"success","is_error":false,"result":"done: %s","session_id":"s-%s","num_turns":1}\n' "$last" "$$"
`
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// turnsCounted sums omega_turns_total over its labels, as /metrics shows it.
func turnsCounted(t *testing.T, url string) float64 {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "omega_turns_total") {
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		sum += v
	}
	return sum
}

// waitCounted waits until /metrics counts at least n turns.
func waitCounted(t *testing.T, url string, n int) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); turnsCounted(t, url) < float64(n); {
		if time.Now().After(deadline) {
			t.Fatalf("omega_turns_total stayed at %v, want %d", turnsCounted(t, url), n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// postAll posts one message per sender, concurrently, without waiting for
// the replies, and returns the turn ids.
func postAll(t *testing.T, url string, senders int, round string) []string {
	t.Helper()
	ids := make([]string, senders)
	var wg sync.WaitGroup
	for i := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := postMessage(t, url, fmt.Sprintf("sender-%d", i), fmt.Sprintf("%s from %d", round, i), "0s")
			ids[i], _ = out["turn_id"].(string)
		}()
	}
	wg.Wait()
	for i, id := range ids {
		if id == "" {
			t.Fatalf("message %d of %s not taken", i, round)
		}
	}
	return ids
}

// The database refuses connections for a few seconds while turns of
// several senders are in flight: omega serve keeps running, every message
// gets its reply exactly once, and the metrics keep counting afterwards.
func TestServeOutlivesDatabaseOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	db := newOutageDB(t)
	bin := buildOmega(t)
	addr := freeport.Addr(t)
	url := "http://" + addr
	env := append(os.Environ(), "OMEGA_DATA_DIR="+t.TempDir(), "OMEGA_DATABASE_URL="+db.dsn,
		"OMEGA_CLAUDE_BIN="+outageClaude(t, t.TempDir()), "OMEGA_HTTP_ADDR="+addr, "OMEGA_STATUS_FIRST=0s",
		"OMEGA_CLASSIFY=false", "HOME="+t.TempDir())
	p := startServe(t, bin, env)
	waitHTTP(t, url)

	const senders = 6
	ids := postAll(t, url, senders, "before")
	waitCounted(t, url, 1) // turns are flowing
	ids = append(ids, postAll(t, url, senders, "during")...)
	db.refuse(t, 3*time.Second)
	counted := turnsCounted(t, url)
	ids = append(ids, postAll(t, url, senders, "after")...)

	for _, id := range ids {
		resp, err := (&http.Client{Timeout: 90 * time.Second}).Get(url + "/api/turns/" + id + "?wait=60s")
		if err != nil {
			t.Fatalf("turn %s: %v (omega serve exited: %v)", id, err, p.cmd.ProcessState)
		}
		resp.Body.Close()
	}
	s := openStore(t, db.dsn)
	for _, id := range ids {
		evs, err := s.Load(context.Background(), domain.TurnStream(id), 1)
		if err != nil {
			t.Fatal(err)
		}
		counts := typeCounts(evs)
		if counts["ReplySent"] != 1 || counts[turn.TurnCompleted{}.EventType()] != 1 {
			t.Errorf("turn %s events: %v", id, counts)
		}
	}
	// The metrics follower outlived the outage: the turns completed
	// since are counted.
	waitCounted(t, url, len(ids))
	t.Logf("turns counted: %v before the last round, %v at the end", counted, turnsCounted(t, url))
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := exitOf(t, p, 30*time.Second); code != 0 {
		t.Fatalf("omega serve exited with %d after the outage", code)
	}
	if !strings.Contains(p.log.String(), "retrying") {
		t.Errorf("the outage left no log line")
	}
}

func openStore(t *testing.T, dsn string) eventstore.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
