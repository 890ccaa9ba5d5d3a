// Package build runs builds: the process manager that takes each build
// stream through its topology's phases, one recorded step at a time
// (intent, act, outcome), and resumes every build in progress when omega
// starts, at the step its stream records. It also reads and validates
// topologies (TOPOLOGY.toml and agent files), deploys the embedded
// default, imports them into the log, and keeps agent files in the
// workspace only while a build runs.
package build

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/omega-gateway/omega/domain"
	builddom "github.com/omega-gateway/omega/domain/build"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/providers"
)

// Provider completes an agent's call.
type Provider interface {
	Complete(ctx context.Context, req providers.Request) (providers.Response, error)
}

// Notifier tells the person who asked for a build how it goes.
type Notifier interface {
	Notify(ctx context.Context, channel, chatID, text string) error
}

// Config holds a Manager's dependencies.
type Config struct {
	Store    eventstore.Store
	Registry *domain.Registry
	Provider Provider
	// Notifier may be nil: nobody is told (builds still run).
	Notifier Notifier
	// Workspace is the provider's working directory; builds live in its
	// builds folder, agent files in its .claude/agents.
	Workspace string
	// TopologiesDir is imported into the log when Run starts ("": not).
	TopologiesDir string
	// Models maps a phase's model tier to a model (nil: the provider's).
	Models func(tier string) string
	Logger *slog.Logger
	// NudgeFirst and NudgeEvery pace the delay nudges while an agent
	// works (0: none).
	NudgeFirst, NudgeEvery time.Duration
	// Node is this process's stable identity: a call another node
	// recorded without its reply is left to it until Stale has passed
	// (0: 90 minutes, past the provider's longest call); one this node
	// recorded was cut off by its own crash and is made again at once.
	Node  string
	Stale time.Duration
}

// Manager runs the builds of the log.
type Manager struct {
	cfg     Config
	guard   *guard
	mu      sync.Mutex
	running map[string]bool
	seen    int64 // the index's version read so far
	wg      sync.WaitGroup
}

// New returns a Manager.
func New(cfg Config) (*Manager, error) {
	if cfg.Store == nil || cfg.Registry == nil || cfg.Provider == nil || cfg.Logger == nil || cfg.Workspace == "" {
		return nil, errors.New("build: the manager needs a store, registry, provider, logger and workspace")
	}
	return &Manager{cfg: cfg, guard: newGuard(cfg.Workspace), running: map[string]bool{}}, nil
}

// Run removes the agent files a crash left behind, resumes every build
// in progress and starts each new one, until ctx ends; then it waits for
// the builds' goroutines (an agent call cut off is made again at the next
// start).
func (m *Manager) Run(ctx context.Context) error {
	if m.cfg.TopologiesDir != "" {
		// A topology that does not validate is logged, not fatal: the
		// others still build, and the last good one stays in the log.
		_, problems, err := Import(ctx, m.cfg.Store, m.cfg.Registry, m.cfg.TopologiesDir, m.cfg.Logger)
		if err = errors.Join(append(problems, err)...); err != nil {
			m.cfg.Logger.Warn("topologies not all imported", "err", err)
		}
	}
	m.sweep(ctx)
	// Builds take minutes: a look at the index's version each second
	// starts a new one soon enough, and costs one cached read.
	poll := time.NewTicker(time.Second)
	defer poll.Stop()
	failing := false // an outage is logged when it starts and when it ends
	for {
		err := m.startPending(ctx)
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			m.cfg.Logger.Warn("build: looking for builds to run failed; trying again each second", "err", err)
			failing = true
		case err == nil && failing:
			m.cfg.Logger.Info("build: looking for builds to run works again")
			failing = false
		}
		select {
		case <-ctx.Done():
			m.wg.Wait()
			return nil
		case <-poll.C:
		}
	}
}

// sweep removes the agent files of every build's topology that no build
// of this process runs: a crash gave their guard no chance.
func (m *Manager) sweep(ctx context.Context) {
	states, err := List(ctx, m.cfg.Store, m.cfg.Registry)
	if err != nil {
		m.cfg.Logger.Warn("build: cannot list builds to clean agent files", "err", err)
		return
	}
	var names []string
	for _, st := range states {
		names = append(names, st.Req.Topology.AgentNames()...)
	}
	if err := m.guard.sweep(names); err != nil {
		m.cfg.Logger.Warn("build: agent files left behind", "err", err)
	}
}

// startPending starts a goroutine for each build the index lists anew
// (every build at the first call) that is in progress and has none.
func (m *Manager) startPending(ctx context.Context) error {
	v, err := m.cfg.Store.StreamVersion(ctx, builddom.IndexStream)
	m.mu.Lock()
	seen := m.seen
	m.mu.Unlock()
	if err != nil || v == seen {
		return err
	}
	ids, v, err := idsFrom(ctx, m.cfg.Store, m.cfg.Registry, seen+1)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if st, err := Load(ctx, m.cfg.Store, m.cfg.Registry, id); err != nil || st.Terminal() {
			if err != nil && !errors.Is(err, ErrNotFound) {
				return err // the index is read again from where it was
			}
			continue
		}
		m.mu.Lock()
		start := !m.running[id]
		m.running[id] = true
		m.mu.Unlock()
		if start {
			m.wg.Add(1)
			go func() {
				defer m.wg.Done()
				m.drive(ctx, id)
			}()
		}
	}
	m.mu.Lock()
	m.seen = v
	m.mu.Unlock()
	return nil
}

// drive takes one build through its steps until it ends or ctx does.
func (m *Manager) drive(ctx context.Context, id string) {
	defer func() {
		// A resume that came while this goroutine ended found it still
		// running: the index is read again from its start.
		m.mu.Lock()
		delete(m.running, id)
		m.seen = 0
		m.mu.Unlock()
	}()
	st, err := Load(ctx, m.cfg.Store, m.cfg.Registry, id)
	if err != nil {
		m.cfg.Logger.Warn("build: cannot load; the index is read again", "build", id, "err", err)
		m.mu.Lock()
		m.seen = 0
		m.mu.Unlock()
		return
	}
	agents := st.Req.Topology.Agents
	if err := m.guard.acquire(agents); err != nil {
		m.cfg.Logger.Error("build: cannot write agent files", "build", id, "err", err)
	}
	defer func() {
		if err := m.guard.release(agents); err != nil {
			m.cfg.Logger.Warn("build: agent files not removed", "build", id, "err", err)
		}
	}()
	if err := os.MkdirAll(m.dir(st), 0o755); err != nil {
		m.cfg.Logger.Error("build: cannot create its folder", "build", id, "err", err)
	}
	m.loop(ctx, id)
}

// loop decides and performs one step at a time; a failed step is tried
// again after a pause that doubles up to 30 s, so that no outage ends a
// build.
func (m *Manager) loop(ctx context.Context, id string) {
	wait := 100 * time.Millisecond
	for ctx.Err() == nil {
		st, err := Load(ctx, m.cfg.Store, m.cfg.Registry, id)
		if err == nil {
			step := st.Next()
			if step.Kind == builddom.StepNone {
				return
			}
			if err = m.do(ctx, st, step); err == nil || errors.Is(err, eventstore.ErrConcurrency) {
				wait = 100 * time.Millisecond
				continue // a conflict: someone cancelled or resumed; read again
			}
			if errors.Is(err, errOtherNode) {
				if !sleep(ctx, time.Second) {
					return
				}
				continue
			}
		}
		if ctx.Err() != nil {
			return
		}
		m.cfg.Logger.Warn("build: step failed; trying again", "build", id, "retry_in", wait, "err", err)
		if !sleep(ctx, wait) {
			return
		}
		wait = min(wait*2, 30*time.Second)
	}
}

// dir is the build's folder.
func (m *Manager) dir(st builddom.State) string {
	return filepath.Join(m.cfg.Workspace, "builds", st.Req.Name)
}

// append records payloads on the build's stream at the version folded.
func (m *Manager) append(ctx context.Context, st builddom.State, ps ...domain.Payload) error {
	evs, err := domain.NewEvents(domain.Metadata{CorrelationID: st.Req.ID, Channel: st.Req.Channel, Sender: st.Req.SenderID}, ps...)
	if err != nil {
		return err
	}
	if _, err := m.cfg.Store.Append(ctx, builddom.Stream(st.Req.ID), eventstore.Exact(st.Version), evs...); err != nil {
		return fmt.Errorf("build %s: %w", st.Req.ID, err)
	}
	return nil
}

// notify tells the person; a failure is logged, the build goes on.
func (m *Manager) notify(ctx context.Context, st builddom.State, text string) {
	if m.cfg.Notifier == nil || st.Req.Channel == "" || text == "" {
		return
	}
	if err := m.cfg.Notifier.Notify(ctx, st.Req.Channel, st.Req.ChatID, text); err != nil {
		m.cfg.Logger.Warn("build: progress message not sent", "build", st.Req.ID, "channel", st.Req.Channel, "err", err)
	}
}

// sleep waits d or until ctx ends (false).
func sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}
