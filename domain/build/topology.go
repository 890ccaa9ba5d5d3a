package build

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// The four phase types of a topology.
const (
	PhaseStandard       = "standard"        // run the agent, check for an error, go on
	PhaseParseBrief     = "parse-brief"     // run the agent, keep its brief
	PhaseCorrectiveLoop = "corrective-loop" // run a verifier; on failure a fix agent, then verify again, up to a cap
	PhaseParseSummary   = "parse-summary"   // run the agent, its reply is the build's final summary
)

// The pre-validation types.
const (
	ValidateFileExists   = "file_exists"   // every listed path exists in the build's folder
	ValidateFilePatterns = "file_patterns" // some file in the folder's tree ends with one of the patterns
)

// Default corrective-loop cap, when a topology gives none.
const DefaultRetryMax = 3

// Topology is a build pipeline: its phases in order and the agents'
// instructions (agent name to Markdown text).
type Topology struct {
	Name        string            `json:"name"`
	Description string            `json:"description,omitempty"`
	Version     int               `json:"version,omitempty"`
	Phases      []Phase           `json:"phases"`
	Agents      map[string]string `json:"agents"`
}

// Phase is one step of a topology.
type Phase struct {
	Name      string      `json:"name"`
	Agent     string      `json:"agent"`
	ModelTier string      `json:"model_tier,omitempty"` // "fast" or "complex"
	MaxTurns  int         `json:"max_turns,omitempty"`
	Type      string      `json:"phase_type"`
	Pre       *Validation `json:"pre_validation,omitempty"`
	Post      []string    `json:"post_validation,omitempty"`
	Retry     *Retry      `json:"retry,omitempty"`
}

// Validation is a phase's pre-validation.
type Validation struct {
	Type     string   `json:"type"`
	Paths    []string `json:"paths,omitempty"`
	Patterns []string `json:"patterns,omitempty"`
}

// Retry bounds a corrective loop: at most Max fixes by FixAgent.
type Retry struct {
	Max      int    `json:"max"`
	FixAgent string `json:"fix_agent"`
}

// ValidPhaseType reports whether t is one of the four phase types.
func ValidPhaseType(t string) bool {
	switch t {
	case PhaseStandard, PhaseParseBrief, PhaseCorrectiveLoop, PhaseParseSummary:
		return true
	}
	return false
}

// LoopMax is the cap of a corrective-loop phase (0 for other phases).
func (p Phase) LoopMax() int {
	if p.Type != PhaseCorrectiveLoop {
		return 0
	}
	if p.Retry == nil || p.Retry.Max <= 0 {
		return DefaultRetryMax
	}
	return p.Retry.Max
}

// FixAgent is the agent a corrective loop sends failures to.
func (p Phase) FixAgent() string {
	if p.Retry == nil {
		return ""
	}
	return p.Retry.FixAgent
}

// WorstCaseCalls is the most agent calls a build of this topology can
// make: one per phase, and for each corrective loop a fix and a new
// verification per allowed iteration.
func (t Topology) WorstCaseCalls() int {
	n := 0
	for _, p := range t.Phases {
		n += 1 + 2*p.LoopMax()
	}
	return n
}

// AgentNames lists the agents the phases use, sorted, each once.
func (t Topology) AgentNames() []string {
	seen := map[string]bool{}
	for _, p := range t.Phases {
		seen[p.Agent] = true
		if f := p.FixAgent(); f != "" {
			seen[f] = true
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Check lists what is wrong with a topology that parsed, by phase (the
// parser adds the file and line): a phase without name or agent, an
// unknown type, an agent without its file, a loop without a fix agent.
func (t Topology) Check() []PhaseProblem {
	var out []PhaseProblem
	add := func(i int, key, format string, args ...any) {
		out = append(out, PhaseProblem{Phase: i, Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	if len(t.Phases) == 0 {
		add(-1, "phases", "the topology has no [[phases]]")
	}
	names := map[string]bool{}
	for i, p := range t.Phases {
		checkPhase(t, i, p, names, add)
	}
	return out
}

func checkPhase(t Topology, i int, p Phase, names map[string]bool, add func(int, string, string, ...any)) {
	switch {
	case strings.TrimSpace(p.Name) == "":
		add(i, "name", "phase %d has no name", i+1)
	case names[p.Name]:
		add(i, "name", "phase name %q is used twice", p.Name)
	}
	names[p.Name] = true
	if !ValidPhaseType(p.Type) {
		add(i, "phase_type", "phase %q: phase_type %q is not one of standard, parse-brief, corrective-loop, parse-summary", p.Name, p.Type)
	}
	if _, ok := t.Agents[p.Agent]; !ok {
		add(i, "agent", "phase %q: agent %q has no file agents/%s.md", p.Name, p.Agent, p.Agent)
	}
	if p.MaxTurns < 0 {
		add(i, "max_turns", "phase %q: max_turns must not be negative", p.Name)
	}
	if p.Type == PhaseCorrectiveLoop {
		if p.Retry != nil && p.Retry.Max < 0 {
			add(i, "max", "phase %q: retry max must not be negative", p.Name)
		}
		fix := p.FixAgent()
		if fix == "" {
			add(i, "fix_agent", "phase %q: a corrective loop needs [phases.retry] fix_agent", p.Name)
		} else if _, ok := t.Agents[fix]; !ok {
			add(i, "fix_agent", "phase %q: fix_agent %q has no file agents/%s.md", p.Name, fix, fix)
		}
	}
	if v := p.Pre; v != nil {
		if v.Type != ValidateFileExists && v.Type != ValidateFilePatterns {
			add(i, "type", "phase %q: pre_validation type %q is not file_exists or file_patterns", p.Name, v.Type)
		}
	}
}

// PhaseProblem is one thing wrong with a phase (Phase -1: the topology),
// and the key that is wrong, for the parser to find its line.
type PhaseProblem struct {
	Phase int
	Key   string
	Msg   string
}

// Hash identifies a topology's content: phases and agents' texts (JSON
// encodes maps in key order, so equal topologies hash equal).
func (t Topology) Hash() string {
	b, err := json.Marshal(t)
	if err != nil {
		panic(err) // plain strings, ints and slices always encode
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ValidName reports whether s can name a topology, a build or an agent:
// letters, digits, '-' and '_', not starting with '-'.
func ValidName(s string) bool {
	if s == "" || len(s) > 64 || s[0] == '-' {
		return false
	}
	for _, r := range s {
		ok := r == '-' || r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
		if !ok {
			return false
		}
	}
	return true
}
