package pipeline

import (
	"context"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/handlers/pipeline/gather"
	"github.com/omega-gateway/omega/handlers/pipeline/replied"
	"github.com/omega-gateway/omega/internal/redact"
	"github.com/omega-gateway/omega/prompts"
	"github.com/omega-gateway/omega/providers"
)

// Provider is the language model the driver asks.
type Provider interface {
	Name() string
	Complete(ctx context.Context, req providers.Request) (providers.Response, error)
}

// ChannelSet finds the channel a turn's replies go to.
type ChannelSet interface {
	Channel(name string) (channels.Channel, bool)
}

// CommandHook answers bot commands without a provider call (the commands
// issue plugs in here).
type CommandHook interface {
	IsCommand(text string) bool
	Answer(ctx context.Context, tn *turn.Turn, profile sender.SenderProfile) (CommandAnswer, error)
}

// CommandAnswer is a command's reply and the turn events it records.
type CommandAnswer struct {
	Command, Reply string
	Events         []domain.Payload
}

// ReplyHook turns the raw provider reply into what the user sees: it
// applies markers as events and strips them (the markers issue plugs in
// here). The raw reply is already recorded when it runs.
type ReplyHook interface {
	// Process handles raw, the provider's reply to the turn (step 0) or
	// to plan step step (1-based).
	Process(ctx context.Context, tn *turn.Turn, raw string, step int) (Processed, error)
}

// ReplyActs is optionally implemented by a ReplyHook: Acts reports
// whether processing raw may write to streams other than the turn's (it
// holds markers). A hook without it is assumed to act on every reply.
type ReplyActs interface {
	Acts(raw string) bool
}

// Processed is a reply made ready for the user: its text and the turn
// events that record what its markers did.
type Processed struct {
	Text   string
	Events []domain.Payload
}

// DriverConfig tunes the driver.
type DriverConfig struct {
	ModelFast        string
	ModelComplex     string // multi-step plans
	Classify         bool   // classify each message: direct answer or plan
	Workspace        string
	ConversationIdle time.Duration
	Location         *time.Location
	HistoryLimit     int
	StatusFirst      time.Duration // first "still thinking" nudge (seed: 15 s)
	StatusEvery      time.Duration // later nudges (seed: 120 s)
	TypingEvery      time.Duration // typing indicator refresh (seed: 5 s)
	// ProviderProblem, when set, says why the provider cannot work; turns
	// are answered with an explanation instead of a call.
	ProviderProblem error
	// Sandbox is the provider's sandbox mode; its constraint text leads
	// the system prompt.
	Sandbox string
	// Redactor masks configured secrets in error texts before they are
	// recorded: a failing server may echo a token back.
	Redactor *redact.Redactor
	// Inputs names the DecisionInputs this process decides with (their
	// hash); each access decision records it.
	Inputs string
	// Capabilities is what this process can do; the system prompt keeps
	// only the passages about those (nil: the prompt as written).
	// Projects and skills are looked at per turn.
	Capabilities *prompts.Capabilities
	// Streaming shows replies while they are written, where the provider
	// can stream (OMEGA_STREAMING).
	Streaming bool
	// ActionBackoff is the pause before a failed scheduled action's second
	// call; the third waits four times longer (0: 2 s).
	ActionBackoff time.Duration
}

// Profiles loads and changes sender profiles.
type Profiles interface {
	Load(ctx context.Context, channel, senderID string) (sender.SenderProfile, error)
	Decide(ctx context.Context, channel, senderID string, md domain.Metadata, decide func(sender.SenderProfile) ([]domain.Payload, error)) (sender.SenderProfile, error)
}

// ProjectCatalog gives the projects as the log records them, after
// importing what changed in their folder (package projects).
type ProjectCatalog = gather.Projects

// RepliedTurns holds the turns whose final reply went out before their
// completion was recorded (see replied.Turns).
type RepliedTurns = replied.Turns

// NewRepliedTurns returns an empty set.
func NewRepliedTurns() *RepliedTurns { return replied.New() }
