package build

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain"
	builddom "github.com/omega-gateway/omega/domain/build"
	"github.com/omega-gateway/omega/domain/events"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/eventstore/sqlite"
	"github.com/omega-gateway/omega/internal/teststores"
	"github.com/omega-gateway/omega/providers"
)

// agents plays the default topology's agents in-process: each writes
// what its phase needs; QA fails its first check. block, when set, holds
// the calls of that agent until the context ends.
type agents struct {
	mu    sync.Mutex
	calls []string
	qa    map[string]bool
	block string
}

func (a *agents) Complete(ctx context.Context, req providers.Request) (providers.Response, error) {
	a.mu.Lock()
	a.calls = append(a.calls, req.Agent)
	block := a.block == req.Agent
	a.mu.Unlock()
	if block {
		<-ctx.Done()
		return providers.Response{}, ctx.Err()
	}
	var folder string
	for _, l := range strings.Split(req.Prompt, "\n") {
		if f, ok := strings.CutPrefix(l, "Build folder: "); ok {
			folder = filepath.Join(req.WorkDir, f)
		}
	}
	write := func(rel string) {
		p := filepath.Join(folder, rel)
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		_ = os.WriteFile(p, []byte(rel), 0o644)
	}
	text := "done"
	switch req.Agent {
	case "build-analyst":
		write("specs/requirements.md")
	case "build-architect":
		write("specs/architecture.md")
	case "build-developer":
		write("src/main.go")
	case "build-qa":
		a.mu.Lock()
		failed := a.qa[folder]
		a.qa[folder] = true
		a.mu.Unlock()
		text = "VERDICT: pass"
		if !failed {
			text = "VERDICT: fail missing greeting"
		}
	case "build-reviewer":
		text = "VERDICT: pass"
	case "build-delivery":
		write("README.md")
		text = "SUMMARY: ready"
	}
	return providers.Response{Text: text}, nil
}

func (a *agents) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.calls)
}

func newManager(t testing.TB, store eventstore.Store, p Provider, ws string) *Manager {
	m, err := New(Config{Store: store, Registry: events.NewRegistry(), Provider: p, Workspace: ws, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func defaultTopology(t testing.TB) builddom.Topology {
	dir := t.TempDir()
	if err := Deploy(dir); err != nil {
		t.Fatal(err)
	}
	tp, err := LoadTopology(dir, DefaultTopology)
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

func waitState(t *testing.T, store eventstore.Store, id string, done func(builddom.State) bool) builddom.State {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, err := Load(context.Background(), store, events.NewRegistry(), id)
		if err == nil && done(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("build %s: %+v (err %v)", id, st.Status, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A manager stopped while an agent works leaves the call without its
// reply; the next manager makes that call again, and only that one.
func TestManagerResumesWithoutRepeatingACall(t *testing.T) {
	for _, b := range teststores.All() {
		t.Run(b.Name, func(t *testing.T) {
			store, ws := b.Open(t), t.TempDir()
			a := &agents{qa: map[string]bool{}, block: "build-test-writer"}
			req, err := Request(context.Background(), store, Spec{Request: "a greeter", Topology: defaultTopology(t)})
			if err != nil {
				t.Fatal(err)
			}
			ctx, stop := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { _ = newManager(t, store, a, ws).Run(ctx); close(done) }()
			waitState(t, store, req.ID, func(st builddom.State) bool { return st.Calls == 3 })
			if files, _ := filepath.Glob(filepath.Join(ws, ".claude", "agents", "*.md")); len(files) != 7 {
				t.Fatalf("agent files while running: %v", files)
			}
			stop()
			<-done
			if files, _ := filepath.Glob(filepath.Join(ws, ".claude", "agents", "*.md")); len(files) != 0 {
				t.Fatalf("agent files after the manager stopped: %v", files)
			}
			a.mu.Lock()
			a.block = ""
			a.mu.Unlock()
			ctx, stop = context.WithCancel(context.Background())
			defer stop()
			go func() { _ = newManager(t, store, a, ws).Run(ctx) }()
			st := waitState(t, store, req.ID, func(st builddom.State) bool { return st.Terminal() })
			if st.Status != builddom.StatusCompleted || st.Calls != 9 || st.Summary != "ready" || a.count() != 10 {
				t.Fatalf("status %s, %d calls recorded, %d made, summary %q", st.Status, st.Calls, a.count(), st.Summary)
			}
			if got := strings.Join(a.calls[:4], " "); got != "build-analyst build-architect build-test-writer build-test-writer" {
				t.Fatalf("calls: %s", got)
			}
		})
	}
}

// Cancelling a build while its agent works ends it; the reply on its way
// is not recorded.
func TestManagerCancel(t *testing.T) {
	store, ws := teststores.All()[0].Open(t), t.TempDir()
	a := &agents{qa: map[string]bool{}, block: "build-analyst"}
	reg := events.NewRegistry()
	req, err := Request(context.Background(), store, Spec{Request: "x", Topology: defaultTopology(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go func() { _ = newManager(t, store, a, ws).Run(ctx) }()
	waitState(t, store, req.ID, func(st builddom.State) bool { return st.Calls == 1 })
	if err := Cancel(context.Background(), store, reg, req.ID, "test"); err != nil {
		t.Fatal(err)
	}
	st := waitState(t, store, req.ID, func(st builddom.State) bool { return st.Terminal() })
	if st.Status != builddom.StatusCancelled {
		t.Fatalf("status %s", st.Status)
	}
}

// BenchmarkBuild measures what omega adds to a build of the default
// topology (9 agent calls with QA's loop, 41 events) when the agents
// answer at once: recording, folding and the artifacts' hashes.
func BenchmarkBuild(b *testing.B) {
	store, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "omega.db"), sqlite.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	ws := b.TempDir()
	a := &agents{qa: map[string]bool{}}
	m := newManager(b, store, a, ws)
	tp := defaultTopology(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req, err := Request(context.Background(), store, Spec{Request: "bench", Topology: tp})
		if err != nil {
			b.Fatal(err)
		}
		m.drive(context.Background(), req.ID)
	}
	b.StopTimer()
	var evs []domain.Event
	if evs, err = store.Load(context.Background(), builddom.Stream(lastID(b, store)), 1); err != nil || len(evs) == 0 {
		b.Fatalf("no events: %v", err)
	}
	b.ReportMetric(float64(len(evs)), "events/build")
}

func lastID(b *testing.B, store eventstore.Store) string {
	ids, err := IDs(context.Background(), store, events.NewRegistry())
	if err != nil || len(ids) == 0 {
		b.Fatal(err)
	}
	return ids[len(ids)-1]
}

// A call another process recorded without its reply is its own until it
// is stale: this process waits instead of calling the agent twice.
func TestManagerLeavesAnotherNodesCall(t *testing.T) {
	store, ws := teststores.All()[0].Open(t), t.TempDir()
	req, err := Request(context.Background(), store, Spec{Request: "x", Topology: defaultTopology(t)})
	if err != nil {
		t.Fatal(err)
	}
	evs, _ := domain.NewEvents(domain.Metadata{}, builddom.PhaseStarted{Phase: 0, Name: "analyst"},
		builddom.AgentCalled{Phase: 0, Call: 1, Agent: "build-analyst", Role: builddom.RoleRun, Prompt: "Build folder: builds/" + req.Name, Node: "other"})
	if _, err := store.Append(context.Background(), builddom.Stream(req.ID), eventstore.Exact(1), evs...); err != nil {
		t.Fatal(err)
	}
	run := func(stale time.Duration, a *agents) {
		m, err := New(Config{Store: store, Registry: events.NewRegistry(), Provider: a, Workspace: ws, Logger: slog.New(slog.DiscardHandler), Node: "me", Stale: stale})
		if err != nil {
			t.Fatal(err)
		}
		ctx, stop := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer stop()
		_ = m.Run(ctx)
	}
	fresh := &agents{qa: map[string]bool{}}
	run(time.Hour, fresh)
	if fresh.count() != 0 {
		t.Fatalf("another node's fresh call was made again: %v", fresh.calls)
	}
	stale := &agents{qa: map[string]bool{}}
	run(time.Millisecond, stale)
	if stale.count() == 0 || stale.calls[0] != "build-analyst" {
		t.Fatalf("a stale call was not taken over: %v", stale.calls)
	}
}

// refusing stands for the spending guard in front of the provider: it
// refuses every call and remembers what each was tagged as.
type refusing struct {
	mu   sync.Mutex
	tags []providers.Call
}

func (r *refusing) Complete(ctx context.Context, _ providers.Request) (providers.Response, error) {
	c, _ := providers.CallOf(ctx)
	r.mu.Lock()
	r.tags = append(r.tags, c)
	r.mu.Unlock()
	return providers.Response{}, &providers.Error{Class: providers.OverBudget, Provider: "fake", Msg: "daily limit reached"}
}

// An agent call says it is a build's and whose, so the guard decides on
// that person's limits; a refused call fails the build and counts as no
// provider call.
func TestManagerAgentCallsAreTaggedForTheBudget(t *testing.T) {
	store, ws := teststores.All()[0].Open(t), t.TempDir()
	req, err := Request(context.Background(), store, Spec{Request: "a greeter", Topology: defaultTopology(t),
		Channel: "telegram", ChatID: "42", SenderID: "42"})
	if err != nil {
		t.Fatal(err)
	}
	r := &refusing{}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go func() { _ = newManager(t, store, r, ws).Run(ctx) }()
	st := waitState(t, store, req.ID, func(st builddom.State) bool { return st.Terminal() })
	if st.Status != builddom.StatusFailed {
		t.Fatalf("status %s", st.Status)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.tags) == 0 || r.tags[0] != (providers.Call{Purpose: "build", Sender: sender.SenderKey("telegram", "42")}) {
		t.Fatalf("tags %+v", r.tags)
	}
	evs, err := store.Load(context.Background(), "build-"+req.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.Type != "AgentReplied" {
			continue
		}
		p, err := events.NewRegistry().Decode(e)
		if err != nil {
			t.Fatal(err)
		}
		if _, counted := p.(builddom.AgentReplied).ProviderCall(); counted {
			t.Fatalf("a refused call counts as a provider call: %+v", p)
		}
	}
}
