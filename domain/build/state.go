package build

import (
	"time"

	"github.com/omega-gateway/omega/domain"
)

// Build statuses.
const (
	StatusRunning   = "running"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
	StatusCancelled = "cancelled"
)

// PhaseRecord is what happened in one phase, for list, show and the web UI.
type PhaseRecord struct {
	Name       string
	Type       string
	Notice     string
	Status     string // running, completed, failed
	Reason     string
	Iterations int
	Artifacts  map[string]string
	Calls      []CallRecord
	Started    time.Time
}

// CallRecord is one agent call and its reply.
type CallRecord struct {
	Called  AgentCalled
	Replied *AgentReplied
}

// State is a build stream folded.
type State struct {
	Req       BuildRequested
	Version   int64
	Status    string
	Summary   string
	Reason    string
	Phase     int // the current phase
	Calls     int // agent calls so far
	Requested time.Time
	Phases    []PhaseRecord
	cur       phaseState
}

// phaseState is where the current phase stands.
type phaseState struct {
	started, preDone bool
	lastCall         *AgentCalled
	lastCallAt       time.Time
	lastReply        *AgentReplied
	loopPending      bool // a LoopIterated awaits its fix call
	iteration        int
}

// Terminal reports whether the build has ended (it may still be resumed
// after a failure).
func (s State) Terminal() bool { return s.Status != StatusRunning }

// Apply folds one event of a build stream.
func (s *State) Apply(p domain.Payload, version int64, at time.Time) {
	s.Version = version
	switch e := p.(type) {
	case BuildRequested:
		s.Req, s.Status, s.Requested = e, StatusRunning, at
	case PhaseStarted:
		s.Phase, s.cur = e.Phase, phaseState{started: true}
		s.record(e.Phase).Name, s.record(e.Phase).Type, s.record(e.Phase).Notice = e.Name, e.Type, e.Notice
		s.record(e.Phase).Status, s.record(e.Phase).Started = StatusRunning, at
	case ValidationPassed:
		s.cur.preDone = s.cur.preDone || e.Kind == Pre
	case ValidationFailed:
		s.cur.preDone = s.cur.preDone || e.Kind == Pre
	case AgentCalled:
		c := e
		s.cur.lastCall, s.cur.lastCallAt, s.cur.lastReply, s.cur.loopPending = &c, at, nil, false
		s.Calls = max(s.Calls, e.Call)
		r := s.record(e.Phase)
		r.Calls = append(r.Calls, CallRecord{Called: e})
	case AgentReplied:
		s.applyReply(e)
	case LoopIterated:
		s.cur.loopPending, s.cur.iteration = true, e.Iteration
		s.record(e.Phase).Iterations = e.Iteration
	case PhaseCompleted:
		r := s.record(e.Phase)
		r.Status, r.Artifacts = StatusCompleted, e.Artifacts
		if e.Summary != "" {
			s.Summary = e.Summary
		}
		s.Phase, s.cur = e.Phase+1, phaseState{}
	case PhaseFailed:
		r := s.record(e.Phase)
		r.Status, r.Reason = StatusFailed, e.Reason
	default:
		s.applyEnd(p)
	}
}

func (s *State) applyReply(e AgentReplied) {
	if s.cur.lastCall != nil && s.cur.lastCall.Call == e.Call {
		r := e
		s.cur.lastReply = &r
	}
	calls := s.record(e.Phase).Calls
	for i := range calls {
		if calls[i].Called.Call == e.Call {
			r := e
			calls[i].Replied = &r
		}
	}
}

func (s *State) applyEnd(p domain.Payload) {
	switch e := p.(type) {
	case BuildCompleted:
		s.Status, s.Summary = StatusCompleted, e.Summary
	case BuildFailed:
		s.Status, s.Reason = StatusFailed, e.Reason
	case BuildCancelled:
		s.Status = StatusCancelled
	case BuildResumed:
		s.Status, s.Reason, s.Phase, s.cur = StatusRunning, "", e.Phase, phaseState{}
	}
}

// record returns the record of phase i, growing the list as needed.
func (s *State) record(i int) *PhaseRecord {
	for len(s.Phases) <= i {
		s.Phases = append(s.Phases, PhaseRecord{})
	}
	return &s.Phases[i]
}

// Step kinds: what a build does next.
const (
	StepNone        = iota // ended
	StepStartPhase         // record PhaseStarted
	StepPreValidate        // check the phase's pre-validation
	StepCall               // call an agent (again, when Repeat: its reply was never recorded)
	StepJudge              // act on the recorded reply
	StepFail               // the reply was a failure: the phase and the build fail
	StepFinish             // every phase done: BuildCompleted
)

// Step is the next thing a build does.
type Step struct {
	Kind      int
	Phase     int
	Agent     string
	Role      string
	Iteration int
	// Repeat: the call named by Pending was recorded without a reply (a
	// crash cut it off), so it is made again under the same number.
	Repeat    bool
	Pending   *AgentCalled
	PendingAt time.Time // when Pending was recorded
	Reply     *AgentReplied
}

// Next decides the single next step of a build.
func (s State) Next() Step {
	if s.Terminal() {
		return Step{Kind: StepNone}
	}
	phases := s.Req.Topology.Phases
	if s.Phase >= len(phases) {
		return Step{Kind: StepFinish}
	}
	p, c := phases[s.Phase], s.cur
	st := Step{Phase: s.Phase, Iteration: c.iteration}
	switch {
	case !c.started:
		st.Kind = StepStartPhase
	case p.Pre != nil && !c.preDone:
		st.Kind = StepPreValidate
	case c.lastCall == nil:
		st.Kind, st.Agent, st.Role = StepCall, p.Agent, RoleRun
	case c.lastReply == nil:
		st.Kind, st.Agent, st.Role, st.Repeat, st.Pending, st.PendingAt = StepCall, c.lastCall.Agent, c.lastCall.Role, true, c.lastCall, c.lastCallAt
	case c.lastReply.Error != "":
		st.Kind, st.Reply = StepFail, c.lastReply
	case c.loopPending:
		st.Kind, st.Agent, st.Role = StepCall, p.FixAgent(), RoleFix
	case c.lastCall.Role == RoleFix:
		st.Kind, st.Agent, st.Role = StepCall, p.Agent, RoleVerify
	default:
		st.Kind, st.Reply = StepJudge, c.lastReply
	}
	return st
}
