package turn

import (
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/access"
	"github.com/omega-gateway/omega/domain/markers"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/usage"
)

// AttachmentRef is a file that came with a message, saved in the inbox.
type AttachmentRef struct {
	Name   string `json:"name"`
	MIME   string `json:"mime,omitempty"`
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256,omitempty"`
}

// HistoryMessage is one message of the conversation given to a provider.
// Turn names the turn the message comes from (its MessageReceived for
// the user, its ReplyReady for the assistant); a context recorded by
// reference keeps only that, and Text is resolved from the turn.
type HistoryMessage struct {
	Role string `json:"role"`
	Text string `json:"text,omitempty"`
	Turn string `json:"turn,omitempty"`
}

// RecalledPassage is a passage of an older conversation that a context
// recalled by full-text search: the chat's own, never another's. Its text
// is recorded as the model saw it, so a re-run recalls exactly the same.
type RecalledPassage struct {
	Conversation string    `json:"conversation"`
	Turn         string    `json:"turn,omitempty"` // "": a summary
	Kind         string    `json:"kind"`           // user, assistant, summary
	At           time.Time `json:"at"`
	Text         string    `json:"text"`
}

// Turn events, in the order a turn usually records them.
type (
	MessageReceived struct {
		Channel     string          `json:"channel"`
		SenderID    string          `json:"sender_id"`
		SenderName  string          `json:"sender_name,omitempty"`
		ChatID      string          `json:"chat_id"`
		Text        string          `json:"text"`
		PlatformID  string          `json:"platform_id,omitempty"`
		IsGroup     bool            `json:"is_group,omitempty"`
		Mentioned   bool            `json:"mentioned,omitempty"`
		Trusted     bool            `json:"trusted,omitempty"` // owner channels: terminal, HTTP with token
		Attachments []AttachmentRef `json:"attachments,omitempty"`
		ReceivedAt  time.Time       `json:"received_at"`
		// Task is set when the message is a scheduled action that fell due
		// rather than something a person sent.
		Task *TaskOrigin `json:"task,omitempty"`
		// Heartbeat marks the stand-in turn of a heartbeat check-in group,
		// whose markers are applied as a turn's (never a logged message).
		Heartbeat bool `json:"heartbeat,omitempty"`
		// SecretsRedacted counts the secrets of omega's own configuration
		// (tokens, keys) that intake masked in the text and sender name:
		// the record that they were sent, never their value.
		SecretsRedacted int `json:"secrets_redacted,omitempty"`
	}
	// Inputs (both) names the DecisionInputs the decision was made with
	// (their hash; empty in turns recorded before they were).
	AccessGranted struct {
		Reason string `json:"reason"`
		Inputs string `json:"inputs,omitempty"`
	}
	AccessDenied struct {
		Reason string `json:"reason"`
		Inputs string `json:"inputs,omitempty"`
		// Pairing is the pairing code an unknown sender was offered (or
		// that they asked for too many); nil: plainly denied.
		Pairing *access.PairingOffer `json:"pairing,omitempty"`
	}
	// WelcomeSent: the first-contact greeting went out (the sender stream
	// records Welcomed).
	WelcomeSent struct {
		Language string `json:"language"`
		Text     string `json:"text"`
		Error    string `json:"error,omitempty"` // the send failed; the turn goes on
	}
	// AckSent: the sender was busy, so this turn was acknowledged and queued.
	AckSent struct {
		Text string `json:"text"`
		// Skipped: the channel had no slot to spare at once, and an
		// acknowledgement must not delay the reply it announces.
		Skipped bool `json:"skipped,omitempty"`
	}
	// CommandAnswered: the message was a bot command, answered without a
	// provider call.
	CommandAnswered struct {
		Command string `json:"command"`
		Reply   string `json:"reply"`
	}
	// ContextBuilt records exactly what the provider will be given. Schema
	// 2 records it by reference (see ByReference and Resolve): the texts
	// are in SystemParts and PromptParts and the history names its turns;
	// System, Prompt and the history's texts are filled in by Resolve.
	ContextBuilt struct {
		ConversationID   string           `json:"conversation_id"`
		Project          string           `json:"project,omitempty"`
		Language         string           `json:"language"`
		Model            string           `json:"model"`
		SessionID        string           `json:"session_id,omitempty"` // resumed provider session
		Continuation     bool             `json:"continuation,omitempty"`
		SectionsUsed     []string         `json:"sections_used"`
		System           string           `json:"system,omitempty"`
		Prompt           string           `json:"prompt,omitempty"`  // what the first call sends
		Message          string           `json:"message,omitempty"` // the sanitized message, for a full-context call
		History          []HistoryMessage `json:"history,omitempty"`
		FactsCount       int              `json:"facts_count,omitempty"`
		SanitizeWarnings []string         `json:"sanitize_warnings,omitempty"`
		// Skills names the skills whose triggers the message matched: their
		// instructions are in the prompt and their MCP servers (named in
		// MCPServers, "skill/server") are given to this turn's call.
		Skills     []string `json:"skills,omitempty"`
		MCPServers []string `json:"mcp_servers,omitempty"`
		// Capabilities names what the system prompt said this process
		// can do (heartbeat, scheduler, images, sandbox:<mode>, ...).
		Capabilities []string `json:"capabilities,omitempty"`
		// ProjectsVersion is the version of the projects stream the
		// context read its project roles from, so a re-run reads the same.
		ProjectsVersion int64 `json:"projects_version,omitempty"`
		// Recalled are the passages of older conversations the message's
		// recall keywords found (see promptctx.BlockRecalled).
		Recalled    []RecalledPassage `json:"recalled,omitempty"`
		SystemParts []TextPart        `json:"system_parts,omitempty"`
		PromptParts []TextPart        `json:"prompt_parts,omitempty"` // none: the prompt is the message
		// HistoryTurns names the turns the history comes from (see
		// historyRefs); MessageAsReceived: Message is the turn's message
		// as received.
		HistoryTurns      []string `json:"history_turns,omitempty"`
		MessageAsReceived bool     `json:"message_as_received,omitempty"`
		// SystemPieces and PromptPieces are what System and Prompt are
		// made of (their concatenation), so that each sizeable piece is
		// stored once; in memory only.
		SystemPieces []TextPiece `json:"-"`
		PromptPieces []TextPiece `json:"-"`
	}
	ProviderCalled struct {
		Provider  string `json:"provider"`
		Model     string `json:"model"`
		SessionID string `json:"session_id,omitempty"`
		Attempt   int    `json:"attempt"`
		// FullContext is set when a failed resume is retried without the session.
		FullContext bool `json:"full_context,omitempty"`
	}
	ProviderReplied struct {
		Provider       string `json:"provider"`
		Model          string `json:"model"`
		Text           string `json:"text"` // raw, before markers are stripped
		SessionID      string `json:"session_id,omitempty"`
		DurationMs     int64  `json:"duration_ms"`
		InputTokens    int    `json:"input_tokens,omitempty"`
		OutputTokens   int    `json:"output_tokens,omitempty"`
		NumTurns       int    `json:"num_turns,omitempty"`
		Resumes        int    `json:"resumes,omitempty"`
		PromptBytes    int    `json:"prompt_bytes"`
		ReplyBytes     int    `json:"reply_bytes"`
		StatusMessages int    `json:"status_messages,omitempty"`
		// Cache tokens and cost as the provider reported them (cost: Claude
		// Code's total_cost_usd only; nothing is priced by omega).
		// UsageReported is false when the provider reported no usage at all:
		// the zero counts are then unknown, not measured.
		CacheReadTokens  int     `json:"cache_read_tokens,omitempty"`
		CacheWriteTokens int     `json:"cache_write_tokens,omitempty"`
		CostUSD          float64 `json:"cost_usd,omitempty"`
		UsageReported    bool    `json:"usage_reported,omitempty"`
	}
	ProviderFailed struct {
		Provider string `json:"provider"`
		Class    string `json:"class"`
		Message  string `json:"message"` // safe: no secrets
		// RetryFullContext: the resumed session failed and the call will be
		// repeated once with the full context.
		RetryFullContext bool  `json:"retry_full_context,omitempty"`
		DurationMs       int64 `json:"duration_ms"`
		StatusMessages   int   `json:"status_messages,omitempty"`
		// ResetAt is, for a call refused by a spending limit (class
		// ClassOverBudget, no call made), when that limit resets.
		ResetAt *time.Time `json:"reset_at,omitempty"`
	}
	// ReplyReady is the text the user will see, after markers and commands.
	ReplyReady struct {
		Text string `json:"text"`
	}
	TurnSuppressed struct {
		Reason string `json:"reason"`
	}
	// ReplySent records a reply delivered. Text is what was sent; it is
	// left out when it is the turn's ReplyReady text and went out (Chunks
	// above 0): read it with SentText. A ReplySent without text and
	// without chunks sent nothing (the reply was only markers).
	ReplySent struct {
		Kind        string   `json:"kind"` // reply, command, deny, error
		Text        string   `json:"text,omitempty"`
		Chunks      int      `json:"chunks"`
		PlatformIDs []string `json:"platform_ids,omitempty"`
		PlainText   bool     `json:"plain_text,omitempty"`
	}
	ReplyFailed struct {
		Kind  string `json:"kind"`
		Class string `json:"class"` // blocked, rejected, not_connected, no_channel, error
		Error string `json:"error"`
	}
	AttachmentsRemoved struct {
		Paths []string `json:"paths"`
	}
	TurnCompleted struct {
		Status     string `json:"status"` // ok, command, denied, error, suppressed, undelivered
		DurationMs int64  `json:"duration_ms"`
	}
	// MarkersApplied records what the provider's markers did: one entry
	// per marker, including the ones that were rejected. Step is the plan
	// step whose reply carried them (0 for a direct reply).
	MarkersApplied struct {
		Step    int                     `json:"step,omitempty"`
		Markers []markers.AppliedMarker `json:"markers"`
	}
	// ConversationClosed ends a conversation (FORGET_CONVERSATION, /forget
	// on the turn stream; idle or shutdown on its summary stream, with the
	// summary): the sender's next message starts a new one.
	ConversationClosed struct {
		ConversationID string `json:"conversation_id"`
		Sender         string `json:"sender"`
		Project        string `json:"project,omitempty"`
		Summary        string `json:"summary,omitempty"`
		Reason         string `json:"reason,omitempty"`
		Messages       int    `json:"messages,omitempty"`
	}
	// RouteDecided records the classification: answer directly, or run a
	// plan of steps. Raw is the classifier's reply; Error says why the
	// classification failed and the turn fell back to a direct answer;
	// Prefilter says the local pre-filter found nothing a plan could be
	// for, so no classification call was made.
	RouteDecided struct {
		Direct    bool     `json:"direct"`
		Steps     []string `json:"steps,omitempty"`
		Model     string   `json:"model"`
		Raw       string   `json:"raw,omitempty"`
		Error     string   `json:"error,omitempty"`
		Prefilter bool     `json:"prefilter,omitempty"`
		// Usage of the classification call, when one was made.
		Usage *usage.CallUsage `json:"usage,omitempty"`
	}
	// PlanStepCompleted records a plan step's raw reply (1-based Index),
	// before its markers are applied: a step on record is never run again.
	PlanStepCompleted struct {
		Index int              `json:"index"`
		Text  string           `json:"text"`
		Reply string           `json:"reply"`
		Usage *usage.CallUsage `json:"usage,omitempty"`
	}
	// PlanStepFailed records one failed attempt of a plan step.
	PlanStepFailed struct {
		Index   int    `json:"index"`
		Attempt int    `json:"attempt"`
		Class   string `json:"class"`
		Message string `json:"message"` // safe: no secrets
		// Usage is the failed call's time (absent before it was recorded).
		Usage *usage.CallUsage `json:"usage,omitempty"`
		// ResetAt is, for a step a spending limit refused (Class
		// ClassOverBudget, no call made), when that limit resets.
		ResetAt *time.Time `json:"reset_at,omitempty"`
	}
	// PlanProgressSent records a plan message sent to the user: the
	// announcement (Index 0) or the progress after step Index, whose reply
	// as the user sees it (markers applied and stripped) is Reply.
	PlanProgressSent struct {
		Index int    `json:"index"`
		Text  string `json:"text"`
		Reply string `json:"reply,omitempty"`
		Error string `json:"error,omitempty"` // the send failed; the plan goes on
	}
)

// TaskOrigin names the task occurrence an action turn runs.
type TaskOrigin struct {
	ID          string `json:"id"`
	Occurrence  int    `json:"occurrence"`
	Project     string `json:"project,omitempty"`
	Description string `json:"description"`
}

// Usage returns the reply's call usage.
func (r ProviderReplied) Usage() usage.CallUsage {
	return usage.CallUsage{
		DurationMs: r.DurationMs, InputTokens: r.InputTokens, OutputTokens: r.OutputTokens,
		CacheReadTokens: r.CacheReadTokens, CacheWriteTokens: r.CacheWriteTokens, CostUSD: r.CostUSD,
		UsageReported: r.UsageReported || r.InputTokens > 0 || r.OutputTokens > 0,
		PromptBytes:   r.PromptBytes, ReplyBytes: r.ReplyBytes, Model: r.Model,
	}
}

func (MessageReceived) EventType() string    { return "MessageReceived" }
func (AccessGranted) EventType() string      { return "AccessGranted" }
func (AccessDenied) EventType() string       { return "AccessDenied" }
func (WelcomeSent) EventType() string        { return "WelcomeSent" }
func (AckSent) EventType() string            { return "AckSent" }
func (CommandAnswered) EventType() string    { return "CommandAnswered" }
func (ContextBuilt) EventType() string       { return "ContextBuilt" }
func (ProviderCalled) EventType() string     { return "ProviderCalled" }
func (ProviderReplied) EventType() string    { return "ProviderReplied" }
func (ProviderFailed) EventType() string     { return "ProviderFailed" }
func (ReplyReady) EventType() string         { return "ReplyReady" }
func (TurnSuppressed) EventType() string     { return "TurnSuppressed" }
func (ReplySent) EventType() string          { return "ReplySent" }
func (ReplyFailed) EventType() string        { return "ReplyFailed" }
func (AttachmentsRemoved) EventType() string { return "AttachmentsRemoved" }
func (TurnCompleted) EventType() string      { return "TurnCompleted" }
func (MarkersApplied) EventType() string     { return "MarkersApplied" }
func (ConversationClosed) EventType() string { return "ConversationClosed" }
func (RouteDecided) EventType() string       { return "RouteDecided" }
func (PlanStepCompleted) EventType() string  { return "PlanStepCompleted" }
func (PlanStepFailed) EventType() string     { return "PlanStepFailed" }
func (PlanProgressSent) EventType() string   { return "PlanProgressSent" }

// RegisterTurnEvents adds the turn events to a registry.
func RegisterEvents(r *domain.Registry) {
	for _, p := range []domain.Payload{MessageReceived{}, AccessGranted{}, AccessDenied{}, WelcomeSent{}, AckSent{},
		CommandAnswered{}, ContextBuilt{}, ProviderCalled{}, ProviderReplied{}, ProviderFailed{}, ReplyReady{},
		TurnSuppressed{}, ReplySent{}, ReplyFailed{}, AttachmentsRemoved{}, TurnCompleted{},
		MarkersApplied{}, ConversationClosed{}, RouteDecided{}, PlanStepCompleted{}, PlanStepFailed{},
		PlanProgressSent{}, MessagesMerged{}, TurnMergedInto{}, PromptTextStored{}} {
		r.Register(p, 1)
	}
	registerImageEvents(r)
	registerStreamEvents(r)
	// Schema 2 records the prompt by reference.
	r.Register(ContextBuilt{}, 2)
	if err := r.RegisterUpcaster(ContextBuilt{}.EventType(), 1, contextBuiltV1ToV2); err != nil {
		panic(err) // registered just above
	}
}

// Sender is who sent the message.
func (m MessageReceived) Sender() sender.SenderRef {
	return sender.SenderRef{Channel: m.Channel, ID: m.SenderID}
}

// Chat is whose conversation the message joins and whose provider session
// it resumes: in a private chat the sender's; in a group chat the group's,
// shared by every member who talks to omega there, so that nothing said in
// private reaches a group and a group's exchange never enters a private
// conversation.
func (m MessageReceived) Chat() sender.SenderRef {
	if !m.IsGroup || m.ChatID == "" {
		return m.Sender()
	}
	return sender.GroupRef(m.Channel, m.ChatID)
}

// ClassOverBudget is the failure class of a call a spending limit
// refused (providers.OverBudget): no call was made.
const ClassOverBudget = "over budget"

// ProviderCall is the provider call the event records.
func (e ProviderReplied) ProviderCall() (usage.ProviderCall, bool) {
	return usage.ProviderCall{Purpose: usage.PurposeTurn, Usage: e.Usage()}, true
}

// ProviderCall is the provider call the event records.
func (e ProviderFailed) ProviderCall() (usage.ProviderCall, bool) {
	if e.Class == ClassOverBudget {
		return usage.ProviderCall{}, false // refused before the call
	}
	return usage.ProviderCall{Purpose: usage.PurposeTurn, Failed: true, Usage: usage.CallUsage{DurationMs: e.DurationMs}}, true
}

// ProviderCall is the provider call the event records.
func (e PlanStepCompleted) ProviderCall() (usage.ProviderCall, bool) {
	return usage.OptionalCall(usage.PurposePlanStep, e.Usage, false)
}

// ProviderCall is the provider call the event records.
func (e PlanStepFailed) ProviderCall() (usage.ProviderCall, bool) {
	if e.Class == ClassOverBudget {
		return usage.ProviderCall{}, false // refused before the call
	}
	return usage.OptionalCall(usage.PurposePlanStep, e.Usage, true)
}

// ProviderCall is the provider call the event records.
func (e RouteDecided) ProviderCall() (usage.ProviderCall, bool) {
	return usage.OptionalCall(usage.PurposeClassifier, e.Usage, e.Error != "")
}
