package app_test

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"testing"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/app/config"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/handlers/pipeline"
	"github.com/omega-gateway/omega/internal/pgtest"
)

// builtNode is a node whose runtime is assembled but not running yet: its
// channels can deliver (the gateway records the message and kicks the
// scheduler), nothing acts on it until run.
func builtNode(t *testing.T, vars map[string]string, ch channels.Channel) (rt *app.Runtime, run func()) {
	t.Helper()
	cfg, err := config.LoadFrom(vars)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.Open(ctx, cfg, quiet, app.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	auth := &pipeline.Auth{Allowed: map[string][]string{"testchat": {"allowed"}}}
	rt, err = a.NewRuntime(ctx, app.RuntimeOptions{Channels: []channels.Channel{ch}, Auth: auth})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	started := false
	run = func() {
		started = true
		go func() {
			defer close(done)
			if err := rt.Run(ctx); err != nil {
				t.Errorf("runtime: %v", err)
			}
		}()
	}
	t.Cleanup(func() {
		cancel()
		if started {
			<-done
		}
		a.Close()
	})
	return rt, run
}

// leaseHolder is who holds the sender's lease ("" when nobody does).
func leaseHolder(t *testing.T, db *sql.DB, snd string) string {
	t.Helper()
	var owner string
	err := db.QueryRow(`SELECT owner FROM sender_leases WHERE sender = $1`, snd).Scan(&owner)
	if errors.Is(err, sql.ErrNoRows) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return owner
}

// Process A receives a message, process B runs and completes its turn
// before A's scheduler gets to it (A was busy), then A takes the sender's
// lease for that turn: A's worker sees the turn completed, sends nothing
// and gives the lease up, so the sender is not pinned to A.
func TestTurnCompletedElsewhereReleasesLease(t *testing.T) {
	dsn := pgtest.DSN(t)
	claude, callLog := fakeClaude(t)
	vars := baseVars(t, backend{"postgres", func(*testing.T) map[string]string { return map[string]string{"OMEGA_DATABASE_URL": dsn} }}, claude)
	chA, chB := &fakeChannel{name: "testchat"}, &fakeChannel{name: "testchat"}
	a, runA := builtNode(t, vars, chA)
	b := startNode(t, vars, chB)

	in := channels.Incoming{Channel: "testchat", SenderID: "allowed", ChatID: "allowed", Text: "hello there", PlatformID: "m-1"}
	if err := a.Deliver(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	snd := sender.SenderKey("testchat", "allowed")
	db := b.rt.DBForTests()
	waitFor(t, "B to answer the turn A received", func() bool { return slices.Contains(chB.texts("allowed"), "echo: hello there") })
	waitFor(t, "B to give the lease up", func() bool { return leaseHolder(t, db, snd) == "" })

	runA()
	waitFor(t, "A to take the lease for the turn it received", func() bool { return leaseHolder(t, db, snd) != "" })
	waitFor(t, "A to give the lease up", func() bool { return leaseHolder(t, db, snd) == "" })
	if sent := chA.texts("allowed"); len(sent) != 0 {
		t.Fatalf("A sent %q for a turn B completed", sent)
	}
	if n := len(calls(t, callLog)); n != 1 {
		t.Fatalf("provider called %d times for one turn", n)
	}
}
