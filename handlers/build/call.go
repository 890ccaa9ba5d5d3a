package build

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	builddom "github.com/omega-gateway/omega/domain/build"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/usage"
	"github.com/omega-gateway/omega/handlers/pipeline/durable"
	"github.com/omega-gateway/omega/providers"
)

// call records the intent to call an agent (unless a crash left one
// without its reply, which is made again under its number), calls it,
// and records the reply before anything acts on it.
func (m *Manager) call(ctx context.Context, st builddom.State, step builddom.Step) error {
	if step.Repeat && !m.mayRepeat(*step.Pending, step.PendingAt) {
		return errOtherNode
	}
	called := step.Pending
	version := st.Version
	if !step.Repeat {
		p := st.Req.Topology.Phases[step.Phase]
		c := builddom.AgentCalled{Phase: step.Phase, Call: st.Calls + 1, Agent: step.Agent, Role: step.Role,
			Iteration: step.Iteration, Model: m.model(p.ModelTier), Prompt: prompt(st, step), Node: m.cfg.Node}
		if err := m.append(ctx, st, c); err != nil {
			return err
		}
		called, version = &c, version+1
	}
	reply := m.callAgent(ctx, st, *called)
	if ctx.Err() != nil {
		return ctx.Err() // shutting down: the call is made again at the next start
	}
	st.Version = version
	return durable.Write(ctx, m.cfg.Logger, st.Req.ID, "agent reply", func(bool) error {
		return m.append(ctx, st, reply)
	})
}

// errOtherNode: another process is making the call; wait for its reply.
var errOtherNode = errors.New("another process is making this agent call")

// mayRepeat reports whether this process may make again a call recorded
// without its reply: its own (a crash cut it off), one recorded before
// nodes were, or another node's gone stale.
func (m *Manager) mayRepeat(c builddom.AgentCalled, at time.Time) bool {
	if c.Node == "" || c.Node == m.cfg.Node || at.IsZero() {
		return true
	}
	return time.Since(at) > cmp.Or(m.cfg.Stale, 90*time.Minute)
}

// callAgent calls one agent, nudging the person while it works.
func (m *Manager) callAgent(ctx context.Context, st builddom.State, c builddom.AgentCalled) builddom.AgentReplied {
	p := st.Req.Topology.Phases[c.Phase]
	req := providers.Request{
		System: st.Req.Topology.Agents[c.Agent], Prompt: c.Prompt, Model: c.Model, Agent: c.Agent,
		MaxTurns: p.MaxTurns, WorkDir: m.cfg.Workspace,
	}
	stop := m.nudge(ctx, st)
	started := time.Now()
	resp, err := m.complete(ctx, st, req)
	stop()
	out := builddom.AgentReplied{Phase: c.Phase, Call: c.Call, Agent: c.Agent}
	out.Usage = usage.CallUsage{
		DurationMs: time.Since(started).Milliseconds(), InputTokens: resp.InputTokens, OutputTokens: resp.OutputTokens,
		CacheReadTokens: resp.CacheReadTokens, CacheWriteTokens: resp.CacheWriteTokens, CostUSD: resp.CostUSD,
		UsageReported: resp.UsageReported, PromptBytes: len(c.Prompt), ReplyBytes: len(resp.Text),
	}
	if err != nil {
		var pe *providers.Error
		out.Error = err.Error()
		// A call a spending limit refused was never made: it spent nothing.
		out.OverBudget = providers.ClassOf(err) == providers.OverBudget
		if errors.As(err, &pe) {
			out.Error = pe.Error()
		}
		return out
	}
	out.Text, out.Model, out.SessionID = resp.Text, resp.Model, resp.SessionID
	return out
}

// complete is the one place a build calls the provider. It says what the
// call is for, so the spending guard in front of the provider decides on
// the limits of the person who asked for the build.
func (m *Manager) complete(ctx context.Context, st builddom.State, req providers.Request) (providers.Response, error) {
	c := providers.Call{Purpose: usage.PurposeBuild}
	if st.Req.SenderID != "" {
		c.Sender = sender.SenderKey(st.Req.Channel, st.Req.SenderID)
	}
	return m.cfg.Provider.Complete(providers.WithCall(ctx, c), req)
}

// nudge sends the delay nudges of long turns while an agent works; the
// returned func stops them.
func (m *Manager) nudge(ctx context.Context, st builddom.State) func() {
	if m.cfg.NudgeFirst <= 0 || m.cfg.Notifier == nil || st.Req.Channel == "" {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		first, every := i18n.StatusMessages(st.Req.Language)
		t := time.NewTimer(m.cfg.NudgeFirst)
		defer t.Stop()
		text := first
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				m.notify(ctx, st, text)
				text = every
				if m.cfg.NudgeEvery <= 0 {
					return
				}
				t.Reset(m.cfg.NudgeEvery)
			}
		}
	}()
	return func() { close(done) }
}

func (m *Manager) model(tier string) string {
	if m.cfg.Models == nil {
		return ""
	}
	return m.cfg.Models(tier)
}

// prompt is what an agent is told: the build, its folder, the request,
// and for a fix the report it must fix.
func prompt(st builddom.State, step builddom.Step) string {
	phases := st.Req.Topology.Phases
	p := phases[step.Phase]
	var b strings.Builder
	fmt.Fprintf(&b, "Build: %s\nBuild folder: builds/%s\nPhase: %s (%d of %d), role: %s\n", st.Req.Name, st.Req.Name, p.Name, step.Phase+1, len(phases), step.Role)
	b.WriteString("Work only inside the build folder (relative to the current directory); read what earlier phases wrote there.\n\n")
	fmt.Fprintf(&b, "The person asked:\n%s\n", st.Req.Request)
	switch step.Role {
	case builddom.RoleFix:
		fmt.Fprintf(&b, "\nThe %s check failed (fix %d of %d). Fix what its report lists:\n%s\n", p.Name, step.Iteration, p.LoopMax(), lastVerdict(st, step.Phase))
	case builddom.RoleVerify:
		fmt.Fprintf(&b, "\nThe developer fixed what your last check reported (fix %d of %d). Check again.\n", step.Iteration, p.LoopMax())
	}
	return b.String()
}

// lastVerdict is the text of the phase's last verifier reply.
func lastVerdict(st builddom.State, phase int) string {
	if phase >= len(st.Phases) {
		return ""
	}
	calls := st.Phases[phase].Calls
	for i := len(calls) - 1; i >= 0; i-- {
		if c := calls[i]; c.Called.Role != builddom.RoleFix && c.Replied != nil {
			return c.Replied.Text
		}
	}
	return ""
}
