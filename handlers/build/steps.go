package build

import (
	"context"
	"fmt"
	"strings"

	"github.com/omega-gateway/omega/domain"
	builddom "github.com/omega-gateway/omega/domain/build"
	"github.com/omega-gateway/omega/domain/i18n/buildmsg"
)

// do performs one step and records its outcome.
func (m *Manager) do(ctx context.Context, st builddom.State, step builddom.Step) error {
	switch step.Kind {
	case builddom.StepStartPhase:
		return m.startPhase(ctx, st, step.Phase)
	case builddom.StepPreValidate:
		return m.preValidate(ctx, st, step.Phase)
	case builddom.StepCall:
		return m.call(ctx, st, step)
	case builddom.StepFail:
		reason := fmt.Sprintf("agent %s failed: %s", step.Reply.Agent, step.Reply.Error)
		return m.fail(ctx, st, step.Phase, reason, false)
	case builddom.StepJudge:
		return m.judge(ctx, st, step)
	case builddom.StepFinish:
		notice := buildmsg.Text(st.Req.Language, buildmsg.Done, st.Req.Name, st.Summary)
		if err := m.append(ctx, st, builddom.BuildCompleted{Summary: st.Summary, Notice: notice}); err != nil {
			return err
		}
		m.notify(ctx, st, notice)
		m.cfg.Logger.Info("build completed", "build", st.Req.ID, "name", st.Req.Name, "agent_calls", st.Calls)
		return nil
	}
	return fmt.Errorf("build %s: unknown step %d", st.Req.ID, step.Kind)
}

func (m *Manager) startPhase(ctx context.Context, st builddom.State, i int) error {
	phases := st.Req.Topology.Phases
	p := phases[i]
	notice := buildmsg.Phase(st.Req.Language, p.Name, i, len(phases))
	if i == 0 && st.Calls == 0 {
		start := buildmsg.Text(st.Req.Language, buildmsg.Starting, st.Req.Name, len(phases), st.Req.WorstCaseCalls)
		notice = start + "\n" + notice
	}
	if err := m.append(ctx, st, builddom.PhaseStarted{Phase: i, Name: p.Name, Type: p.Type, Notice: notice}); err != nil {
		return err
	}
	m.notify(ctx, st, notice)
	return nil
}

func (m *Manager) preValidate(ctx context.Context, st builddom.State, i int) error {
	p := st.Req.Topology.Phases[i]
	missing := missingPre(m.dir(st), *p.Pre)
	if len(missing) == 0 {
		return m.append(ctx, st, builddom.ValidationPassed{Phase: i, Kind: builddom.Pre})
	}
	reason := "before the phase, missing: " + strings.Join(missing, ", ")
	return m.failWith(ctx, st, i, reason, false, builddom.ValidationFailed{Phase: i, Kind: builddom.Pre, Missing: missing})
}

// fail ends the phase and the build, and tells the person.
func (m *Manager) fail(ctx context.Context, st builddom.State, i int, reason string, escalated bool) error {
	return m.failWith(ctx, st, i, reason, escalated)
}

func (m *Manager) failWith(ctx context.Context, st builddom.State, i int, reason string, escalated bool, first ...domain.Payload) error {
	p := st.Req.Topology.Phases[i]
	notice := buildmsg.Text(st.Req.Language, buildmsg.Failed, st.Req.Name, p.Name, reason)
	if escalated {
		notice = buildmsg.Text(st.Req.Language, buildmsg.Escalated, st.Req.Name, p.Name, p.LoopMax())
	}
	evs := append(first,
		builddom.PhaseFailed{Phase: i, Reason: reason, Escalated: escalated},
		builddom.BuildFailed{Phase: i, Reason: reason, Notice: notice})
	if err := m.append(ctx, st, evs...); err != nil {
		return err
	}
	m.notify(ctx, st, notice)
	m.cfg.Logger.Warn("build failed", "build", st.Req.ID, "phase", p.Name, "reason", reason, "escalated", escalated)
	return nil
}

// judge acts on a recorded reply as the phase's type says: a corrective
// loop's verdict, a brief, a summary; then the post-validation and the
// phase's artifacts.
func (m *Manager) judge(ctx context.Context, st builddom.State, step builddom.Step) error {
	i := step.Phase
	p := st.Req.Topology.Phases[i]
	var done builddom.PhaseCompleted
	switch p.Type {
	case builddom.PhaseCorrectiveLoop:
		v := builddom.ParseVerdict(step.Reply.Text)
		if !v.Passed {
			if step.Iteration < p.LoopMax() {
				return m.append(ctx, st, builddom.LoopIterated{Phase: i, Iteration: step.Iteration + 1, Max: p.LoopMax(), Reason: v.Reason})
			}
			return m.fail(ctx, st, i, fmt.Sprintf("still failing after %d fixes: %s", p.LoopMax(), v.Reason), true)
		}
	case builddom.PhaseParseBrief:
		done.Brief = builddom.ParseBrief(step.Reply.Text)
	case builddom.PhaseParseSummary:
		done.Summary = builddom.ParseSummary(step.Reply.Text)
	}
	var evs []domain.Payload
	if len(p.Post) > 0 {
		if missing := missingFiles(m.dir(st), p.Post); len(missing) > 0 {
			reason := "after the phase, missing: " + strings.Join(missing, ", ")
			return m.failWith(ctx, st, i, reason, false, builddom.ValidationFailed{Phase: i, Kind: builddom.Post, Missing: missing})
		}
		evs = append(evs, builddom.ValidationPassed{Phase: i, Kind: builddom.Post})
	}
	done.Phase, done.Artifacts = i, hashArtifacts(m.dir(st))
	return m.append(ctx, st, append(evs, done)...)
}
