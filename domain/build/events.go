package build

import (
	"strings"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/usage"
)

// IndexStream lists every build, so that a process finds the builds in
// progress without reading the whole log.
const IndexStream = "builds"

// TopologiesStream holds the topology definitions imported from
// $OMEGA_DATA_DIR/topologies.
const TopologiesStream = "topologies"

// Stream names the stream of one build.
func Stream(id string) string { return "build-" + id }

// IDFromStream returns the build id of a build stream, or "".
func IDFromStream(stream string) string {
	id, ok := strings.CutPrefix(stream, "build-")
	if !ok {
		return ""
	}
	return id
}

// Agent call roles within a phase.
const (
	RoleRun    = "run"    // the phase's agent, first time
	RoleFix    = "fix"    // a corrective loop's fix agent
	RoleVerify = "verify" // the phase's agent again after a fix
)

// Validation kinds.
const (
	Pre  = "pre"
	Post = "post"
)

// Events of the topologies and builds streams.
type (
	// TopologyDefined records a topology as imported (first time or
	// changed), with its whole content.
	TopologyDefined struct {
		Topology Topology `json:"topology"`
		Hash     string   `json:"hash"`
	}
	// BuildIndexed lists a build in the index stream.
	BuildIndexed struct {
		ID string `json:"id"`
	}
	// BuildRequested opens a build: what the person asked for, where to
	// tell them, and the topology as it was (a later edit does not change
	// a build in progress, nor its re-run).
	BuildRequested struct {
		ID             string   `json:"id"`
		Name           string   `json:"name"` // folder under workspace/builds
		Request        string   `json:"request"`
		Origin         string   `json:"origin"` // "cli", "slash", "marker", "keywords"
		Channel        string   `json:"channel,omitempty"`
		ChatID         string   `json:"chat_id,omitempty"`
		SenderID       string   `json:"sender_id,omitempty"`
		Language       string   `json:"language,omitempty"`
		Topology       Topology `json:"topology"`
		TopologyHash   string   `json:"topology_hash"`
		WorstCaseCalls int      `json:"worst_case_calls"`
	}
	// PhaseStarted opens a phase; Notice is the progress message the
	// person is sent.
	PhaseStarted struct {
		Phase  int    `json:"phase"`
		Name   string `json:"name"`
		Type   string `json:"phase_type"`
		Notice string `json:"notice,omitempty"`
	}
	// ValidationPassed and ValidationFailed record a pre or post check.
	ValidationPassed struct {
		Phase int    `json:"phase"`
		Kind  string `json:"kind"`
	}
	ValidationFailed struct {
		Phase   int      `json:"phase"`
		Kind    string   `json:"kind"`
		Missing []string `json:"missing"`
	}
	// AgentCalled is the intent to call an agent, recorded before the call.
	AgentCalled struct {
		Phase     int    `json:"phase"`
		Call      int    `json:"call"` // 1, 2, ... over the whole build
		Agent     string `json:"agent"`
		Role      string `json:"role"`
		Iteration int    `json:"iteration,omitempty"`
		Model     string `json:"model,omitempty"`
		Prompt    string `json:"prompt"`
		// Node is the process that makes the call: another process
		// leaves a call without its reply to it until it is stale.
		Node string `json:"node,omitempty"`
	}
	// AgentReplied is the agent's reply (or its failure), recorded before
	// anything acts on it.
	AgentReplied struct {
		Phase     int             `json:"phase"`
		Call      int             `json:"call"`
		Agent     string          `json:"agent"`
		Text      string          `json:"text,omitempty"`
		Error     string          `json:"error,omitempty"`
		Model     string          `json:"model,omitempty"`
		SessionID string          `json:"session_id,omitempty"`
		Usage     usage.CallUsage `json:"usage"`
		// OverBudget: a spending limit refused the call, which was not
		// made, so it counts as no provider call.
		OverBudget bool `json:"over_budget,omitempty"`
	}
	// LoopIterated records a verifier's failure with retries left: the
	// fix agent is called next. Iteration counts from 1 up to Max.
	LoopIterated struct {
		Phase     int    `json:"phase"`
		Iteration int    `json:"iteration"`
		Max       int    `json:"max"`
		Reason    string `json:"reason,omitempty"`
	}
	// PhaseCompleted closes a phase with the hash of every artifact in
	// the build's folder, and the brief or summary its type parses.
	PhaseCompleted struct {
		Phase     int               `json:"phase"`
		Artifacts map[string]string `json:"artifacts,omitempty"`
		Brief     string            `json:"brief,omitempty"`
		Summary   string            `json:"summary,omitempty"`
	}
	// PhaseFailed closes a phase that failed; Escalated when a corrective
	// loop reached its cap and the person must decide.
	PhaseFailed struct {
		Phase     int    `json:"phase"`
		Reason    string `json:"reason"`
		Escalated bool   `json:"escalated,omitempty"`
	}
	BuildCompleted struct {
		Summary string `json:"summary"`
		Notice  string `json:"notice,omitempty"`
	}
	BuildFailed struct {
		Phase  int    `json:"phase"`
		Reason string `json:"reason"`
		Notice string `json:"notice,omitempty"`
	}
	BuildCancelled struct {
		By string `json:"by,omitempty"`
	}
	// BuildResumed restarts a failed build at the phase it failed in.
	BuildResumed struct {
		Phase int    `json:"phase"`
		By    string `json:"by,omitempty"`
	}
)

func (TopologyDefined) EventType() string  { return "TopologyDefined" }
func (BuildIndexed) EventType() string     { return "BuildIndexed" }
func (BuildRequested) EventType() string   { return "BuildRequested" }
func (PhaseStarted) EventType() string     { return "PhaseStarted" }
func (ValidationPassed) EventType() string { return "ValidationPassed" }
func (ValidationFailed) EventType() string { return "ValidationFailed" }
func (AgentCalled) EventType() string      { return "AgentCalled" }
func (AgentReplied) EventType() string     { return "AgentReplied" }
func (LoopIterated) EventType() string     { return "LoopIterated" }
func (PhaseCompleted) EventType() string   { return "PhaseCompleted" }
func (PhaseFailed) EventType() string      { return "PhaseFailed" }
func (BuildCompleted) EventType() string   { return "BuildCompleted" }
func (BuildFailed) EventType() string      { return "BuildFailed" }
func (BuildCancelled) EventType() string   { return "BuildCancelled" }
func (BuildResumed) EventType() string     { return "BuildResumed" }

// ProviderCall is the provider call the event records.
func (e AgentReplied) ProviderCall() (usage.ProviderCall, bool) {
	return usage.ProviderCall{Purpose: usage.PurposeBuild, Failed: e.Error != "", Usage: e.Usage}, !e.OverBudget
}

// RegisterEvents adds the topology and build events to a registry.
func RegisterEvents(r *domain.Registry) {
	for _, p := range []domain.Payload{
		TopologyDefined{}, BuildIndexed{}, BuildRequested{}, PhaseStarted{}, ValidationPassed{}, ValidationFailed{},
		AgentCalled{}, AgentReplied{}, LoopIterated{}, PhaseCompleted{}, PhaseFailed{}, BuildCompleted{},
		BuildFailed{}, BuildCancelled{}, BuildResumed{}, BuildProposed{}, ProposalAnswered{},
	} {
		r.Register(p, 1)
	}
}
