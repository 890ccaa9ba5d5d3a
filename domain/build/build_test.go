package build

import (
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain"
)

func loopTopology() Topology {
	return Topology{Name: "t", Agents: map[string]string{"a": "", "dev": "", "qa": ""}, Phases: []Phase{
		{Name: "one", Agent: "a", Type: PhaseParseBrief},
		{Name: "qa", Agent: "qa", Type: PhaseCorrectiveLoop, Retry: &Retry{Max: 2, FixAgent: "dev"}, Pre: &Validation{Type: ValidateFilePatterns, Patterns: []string{".go"}}},
	}}
}

func fold(evs ...domain.Payload) State {
	var s State
	for i, e := range evs {
		s.Apply(e, int64(i+1), time.Time{})
	}
	return s
}

func TestWorstCaseCalls(t *testing.T) {
	if got := loopTopology().WorstCaseCalls(); got != 1+1+2*2 {
		t.Fatalf("WorstCaseCalls = %d", got)
	}
	loop := Phase{Type: PhaseCorrectiveLoop}
	if loop.LoopMax() != DefaultRetryMax {
		t.Fatalf("a loop without a cap gets %d", loop.LoopMax())
	}
}

// Each recorded step decides the next one; a call recorded without its
// reply is made again under its number, never a new one.
func TestNext(t *testing.T) {
	req := BuildRequested{ID: "b", Topology: loopTopology()}
	call := func(phase, n int, agent, role string) AgentCalled {
		return AgentCalled{Phase: phase, Call: n, Agent: agent, Role: role}
	}
	reply := func(phase, n int, text string) AgentReplied { return AgentReplied{Phase: phase, Call: n, Text: text} }
	cases := []struct {
		name string
		evs  []domain.Payload
		want Step
	}{
		{"new", []domain.Payload{req}, Step{Kind: StepStartPhase}},
		{"started", []domain.Payload{req, PhaseStarted{}}, Step{Kind: StepCall, Agent: "a", Role: RoleRun}},
		{"cut off", []domain.Payload{req, PhaseStarted{}, call(0, 1, "a", RoleRun)}, Step{Kind: StepCall, Agent: "a", Role: RoleRun, Repeat: true}},
		{"replied", []domain.Payload{req, PhaseStarted{}, call(0, 1, "a", RoleRun), reply(0, 1, "x")}, Step{Kind: StepJudge}},
		{"failed", []domain.Payload{req, PhaseStarted{}, call(0, 1, "a", RoleRun), AgentReplied{Call: 1, Error: "down"}}, Step{Kind: StepFail}},
		{"next phase", []domain.Payload{req, PhaseStarted{}, call(0, 1, "a", RoleRun), reply(0, 1, "x"), PhaseCompleted{Phase: 0}},
			Step{Kind: StepStartPhase, Phase: 1}},
		{"pre-validation", []domain.Payload{req, PhaseCompleted{Phase: 0}, PhaseStarted{Phase: 1}}, Step{Kind: StepPreValidate, Phase: 1}},
		{"loop fix", []domain.Payload{req, PhaseCompleted{Phase: 0}, PhaseStarted{Phase: 1}, ValidationPassed{Phase: 1, Kind: Pre},
			call(1, 2, "qa", RoleRun), reply(1, 2, "VERDICT: fail"), LoopIterated{Phase: 1, Iteration: 1, Max: 2}},
			Step{Kind: StepCall, Phase: 1, Agent: "dev", Role: RoleFix, Iteration: 1}},
		{"loop verify", []domain.Payload{req, PhaseCompleted{Phase: 0}, PhaseStarted{Phase: 1}, ValidationPassed{Phase: 1, Kind: Pre},
			call(1, 2, "qa", RoleRun), reply(1, 2, "VERDICT: fail"), LoopIterated{Phase: 1, Iteration: 1, Max: 2}, call(1, 3, "dev", RoleFix), reply(1, 3, "fixed")},
			Step{Kind: StepCall, Phase: 1, Agent: "qa", Role: RoleVerify, Iteration: 1}},
		{"all done", []domain.Payload{req, PhaseCompleted{Phase: 0}, PhaseCompleted{Phase: 1, Summary: "s"}}, Step{Kind: StepFinish, Phase: 0}},
		{"cancelled", []domain.Payload{req, PhaseStarted{}, BuildCancelled{}}, Step{Kind: StepNone}},
		{"failed build", []domain.Payload{req, PhaseStarted{}, PhaseFailed{}, BuildFailed{}}, Step{Kind: StepNone}},
		{"resumed", []domain.Payload{req, PhaseCompleted{Phase: 0}, PhaseStarted{Phase: 1}, PhaseFailed{Phase: 1}, BuildFailed{Phase: 1}, BuildResumed{Phase: 1}},
			Step{Kind: StepStartPhase, Phase: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := fold(c.evs...).Next()
			got.Pending, got.Reply = nil, nil
			if got != c.want {
				t.Fatalf("Next() = %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestParseVerdict(t *testing.T) {
	cases := []struct {
		reply  string
		passed bool
		reason string
	}{
		{"All good.\nVERDICT: pass", true, ""},
		{"verdict: PASS.", true, ""},
		{"VERDICT: fail two tests fail", false, "fail two tests fail"},
		{"VERDICT: pass\nVERDICT: fail later", false, "fail later"},
		{"no verdict here", false, "the reply has no VERDICT: line"},
	}
	for _, c := range cases {
		v := ParseVerdict(c.reply)
		if v.Passed != c.passed || v.Reason != c.reason {
			t.Errorf("ParseVerdict(%q) = %+v", c.reply, v)
		}
	}
	if got := ParseSummary("done\nSUMMARY: it works"); got != "it works" {
		t.Errorf("ParseSummary = %q", got)
	}
	if got := ParseBrief("first para\n\nsecond"); got != "first para" {
		t.Errorf("ParseBrief = %q", got)
	}
	if got := NameFor("A tiny CLI, please!", "0123456789"); got != "a-tiny-cli-please-01234567" {
		t.Errorf("NameFor = %q", got)
	}
}

func TestCheck(t *testing.T) {
	tp := loopTopology()
	tp.Phases = append(tp.Phases, Phase{Name: "one", Agent: "nobody", Type: "sideways"}, Phase{Name: "loop", Agent: "qa", Type: PhaseCorrectiveLoop})
	keys := map[string]bool{}
	for _, p := range tp.Check() {
		keys[p.Key] = true
	}
	for _, k := range []string{"name", "phase_type", "agent", "fix_agent"} {
		if !keys[k] {
			t.Errorf("Check missed %s: %+v", k, tp.Check())
		}
	}
	if p := loopTopology().Check(); len(p) != 0 {
		t.Errorf("a good topology: %+v", p)
	}
}
