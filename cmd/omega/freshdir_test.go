package main

import (
	"bytes"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/omega-gateway/omega/internal/pgtest"
)

// freshEnv is the environment of an omega that has never run: a data
// directory with nothing in it, no PostgreSQL.
func freshEnv(t *testing.T) (env []string, data string) {
	dir := t.TempDir()
	data = filepath.Join(dir, "data")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OMEGA_") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	return append(env, "HOME="+dir, "OMEGA_DATA_DIR="+data, "OMEGA_CLAUDE_BIN=/bin/true"), data
}

// runBin runs the built omega and returns its stdout, stderr and error.
func runBin(t *testing.T, bin string, env []string, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	err := cmd.Run()
	return out.String(), errs.String(), err
}

// On a data directory omega has never used, doctor reports no missing
// table, and commands that only read say there is nothing yet rather
// than creating an empty database.
func TestFreshDataDirIsLeftAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildOmega(t)
	env, data := freshEnv(t)
	db := filepath.Join(data, "omega.db")

	out, errs, _ := runBin(t, bin, env, "doctor")
	if strings.Contains(out+errs, "no such table") || strings.Contains(out, "warn  database") || strings.Contains(out, "warn  projection") ||
		!strings.Contains(out, "ok    database") {
		t.Errorf("doctor on a fresh data directory:\n%s%s", out, errs)
	}
	if _, err := os.Stat(db); err == nil {
		t.Errorf("doctor created %s", db)
	}
	want := "no omega data in " + data + ": run omega serve first"
	for _, args := range [][]string{{"pairing", "list"}, {"audit"}, {"facts", "list"}, {"tasks", "list"}, {"identity", "list"}} {
		out, errs, err := runBin(t, bin, env, args...)
		if err == nil || !strings.Contains(errs, want) {
			t.Errorf("omega %s on a fresh data directory (%v):\n%s%s", strings.Join(args, " "), err, out, errs)
		}
		if _, err := os.Stat(db); err == nil {
			t.Fatalf("omega %s created %s", strings.Join(args, " "), db)
		}
	}
}

// The same on a PostgreSQL database omega has never used: doctor and
// migrate status report no schema, the commands that only read say there
// is no data, and none of them creates a table; omega migrate does.
func TestFreshPostgresDatabaseIsLeftAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildOmega(t)
	dsn := pgtest.DSN(t)
	env, _ := freshEnv(t)
	env = append(env, "OMEGA_DATABASE_URL="+dsn)
	if out, _, _ := runBin(t, bin, env, "doctor"); !strings.Contains(out, "ok    database   none yet at postgres") {
		t.Errorf("doctor on an empty database:\n%s", out)
	}
	if out, errs, err := runBin(t, bin, env, "migrate", "status"); err != nil || !strings.Contains(out, "no omega schema yet, version 0") {
		t.Errorf("migrate status on an empty database: %v\n%s%s", err, out, errs)
	}
	for _, args := range [][]string{{"audit"}, {"facts", "list"}, {"tasks", "list"}} {
		out, errs, err := runBin(t, bin, env, args...)
		if err == nil || !strings.Contains(errs, "no omega data in postgres") || !strings.Contains(errs, "run omega serve first") {
			t.Errorf("omega %s on an empty database (%v):\n%s%s", strings.Join(args, " "), err, out, errs)
		}
	}
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var tables int
	if err := db.QueryRow(`SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()`).Scan(&tables); err != nil || tables != 0 {
		t.Fatalf("the commands left %d tables (%v)", tables, err)
	}
	if out, errs, err := runBin(t, bin, env, "migrate"); err != nil || !strings.Contains(out, "schema version") {
		t.Fatalf("migrate: %v\n%s%s", err, out, errs)
	}
	if out, errs, err := runBin(t, bin, env, "audit"); err != nil {
		t.Errorf("audit after migrate: %v\n%s%s", err, out, errs)
	}
}

// The schema is migrated by the first command that writes, which says so
// in one line; later commands say nothing about it. Senders are written
// channel:id in and out.
func TestMigrationLoggedOnceAndSenderSyntax(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildOmega(t)
	env, _ := freshEnv(t)
	out, errs, err := runBin(t, bin, env, "facts", "set", "telegram:1001", "city", "Lisbon")
	if err != nil {
		t.Fatalf("facts set: %v\n%s%s", err, out, errs)
	}
	if n := strings.Count(errs, "database schema migrated"); n != 1 || strings.Contains(errs, "applied migration") {
		t.Errorf("first command's log, want one migration line:\n%s", errs)
	}
	for _, args := range [][]string{{"facts", "list"}, {"facts", "list", "telegram:1001"}} {
		out, errs, err := runBin(t, bin, env, args...)
		if err != nil {
			t.Fatalf("omega %v: %v\n%s%s", args, err, out, errs)
		}
		if strings.Contains(errs, "migrat") {
			t.Errorf("omega %v logged a migration again:\n%s", args, errs)
		}
		if !strings.Contains(out, "telegram:1001") || strings.Contains(out, "telegram-1001") || !strings.Contains(out, "Lisbon") {
			t.Errorf("omega %v:\n%s", args, out)
		}
	}
}

// A setting omega cannot read stops serve before it touches anything, and
// says which variable and what it wants, with every other problem.
func TestServeRefusesUnreadableSettingsByName(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildOmega(t)
	env, data := freshEnv(t)
	out, errs, err := runBin(t, bin, append(env, "OMEGA_HEARTBEAT_INTERVAL=5", "OMEGA_LOG_LEVEL=loud"), "serve")
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("serve: %v, want exit 1\n%s%s", err, out, errs)
	}
	for _, want := range []string{"invalid configuration:", `OMEGA_HEARTBEAT_INTERVAL must be a duration such as 30s, 5m or 1h30m (got "5")`,
		`OMEGA_LOG_LEVEL must be debug, info, warn or error (got "loud")`} {
		if !strings.Contains(errs, want) {
			t.Errorf("serve's error lacks %q:\n%s", want, errs)
		}
	}
	if _, err := os.Stat(filepath.Join(data, "omega.db")); err == nil {
		t.Error("serve created the database before refusing its settings")
	}
}

// omega events --type with a type no event has says which types were
// meant (a misspelt type printed nothing and exited 0); the right one
// prints its events.
func TestEventsTypeFilterNamesTheTypes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildOmega(t)
	env, _ := freshEnv(t)
	if out, errs, err := runBin(t, bin, env, "facts", "set", "telegram:1001", "city", "Lisbon"); err != nil {
		t.Fatalf("facts set: %v\n%s%s", err, out, errs)
	}
	out, errs, err := runBin(t, bin, env, "events", "--type", "factrecorded")
	if err == nil || out != "" || !strings.Contains(errs, `no event type "factrecorded"; did you mean FactRecorded`) {
		t.Errorf("a misspelt type: %v\n%s%s", err, out, errs)
	}
	out, errs, err = runBin(t, bin, env, "events", "--type", "FactRecorded")
	if err != nil || strings.Count(out, "FactRecorded") != 1 || !strings.Contains(out, "Lisbon") {
		t.Errorf("the type: %v\n%s%s", err, out, errs)
	}
}

// OMEGA_HTTP_ADDR set but empty turns the HTTP channel off, as the README
// says; unset, it listens on the default address.
func TestEmptyHTTPAddrTurnsTheAPIOff(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildOmega(t)
	env, _ := freshEnv(t)
	out, _, _ := runBin(t, bin, env, "doctor")
	if !strings.Contains(out, "ok    http       API on 127.0.0.1:8787") {
		t.Errorf("doctor with OMEGA_HTTP_ADDR unset:\n%s", out)
	}
	out, _, _ = runBin(t, bin, append(env, "OMEGA_HTTP_ADDR="), "doctor")
	if !strings.Contains(out, "warn  http       off (OMEGA_HTTP_ADDR is empty") {
		t.Errorf("doctor with OMEGA_HTTP_ADDR empty:\n%s", out)
	}
	env, data := freshEnv(t)
	p := startServe(t, bin, append(env, "OMEGA_HTTP_ADDR="))
	// Started once it has written the workspace's CLAUDE.md (the log is
	// read once the process has ended).
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(data, "workspace", "CLAUDE.md")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("serve did not start")
		}
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	_ = p.cmd.Wait()
	if log := p.log.String(); !strings.Contains(log, `msg="omega ready" channels=0`) || strings.Contains(log, "http channel listening") {
		t.Errorf("serve with OMEGA_HTTP_ADDR empty:\n%s", log)
	}
}
