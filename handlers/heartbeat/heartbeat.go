// Package heartbeat runs the periodic check-in: at each clock-aligned slot
// it reads the checklist from the log, asks the provider to work through
// it (grouped by domain when it is long), applies the reply's markers and
// sends the user what needs attention — or nothing when all is well.
//
// Each check-in is a stream heartbeat-<scope>-<slot> driven like a turn:
// the first append expects no stream, so of several processes exactly one
// runs a slot; every provider call is recorded before it is made and its
// reply before anything else, so a resumed cycle never calls again for a
// group whose reply is on record.
package heartbeat

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/heartbeat"
	"github.com/omega-gateway/omega/domain/markers"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/handlers/duework"
	"github.com/omega-gateway/omega/providers"
)

// Kind is the due-work kind of heartbeat cycles; an item's id is the scope.
const Kind = "heartbeat"

// Provider completes one prompt.
type Provider interface {
	Complete(ctx context.Context, req providers.Request) (providers.Response, error)
}

// Markers applies a reply's markers as a turn would, with turn standing
// for the check-in; it returns the text without markers and what each
// marker did.
type Markers func(ctx context.Context, tn *turn.Turn, raw string) (string, []markers.AppliedMarker, error)

// Channels finds the channel alerts go to.
type Channels interface {
	Channel(name string) (channels.Channel, bool)
}

// Clock is told when the next cycle falls due.
type Clock interface {
	Set(it duework.Item)
}

// Context builds what a check-in is given besides its checklist: the
// enrichment (facts, summaries, lessons, outcomes) and the system prompt.
type Context interface {
	Enrichment(ctx context.Context, target Target, project string) (string, error)
	System(project string) string
	// Deactivated says whether the owner switched the project off.
	Deactivated(ctx context.Context, target Target, project string) (bool, error)
}

// Prompts are the heartbeat prompt templates.
type Prompts interface {
	HeartbeatPrompt(checklist string) string
	HeartbeatClassify(numbered string) string
}

// Target is where alerts go: a channel and chat; zero when nobody is
// configured (alerts are then recorded as undeliverable).
type Target struct {
	Channel string
	Chat    string
}

func (t Target) String() string {
	if t.Channel == "" {
		return ""
	}
	return t.Channel + ":" + t.Chat
}

// Config holds the runner's dependencies and settings.
type Config struct {
	Store    eventstore.Store
	Registry *domain.Registry
	Provider Provider
	Markers  Markers
	Channels Channels
	Clock    Clock
	Context  Context
	Prompts  Prompts
	Logger   *slog.Logger

	Target   Target
	Interval time.Duration // default when no HEARTBEAT_INTERVAL was recorded
	Active   heartbeat.ActiveHours
	Location *time.Location
	// ModelFast classifies; ModelComplex runs the groups.
	ModelFast, ModelComplex string
	WorkDir                 string
	// Parallel bounds the groups called at once (0: 3).
	Parallel int
	// Owner is this process's node identity: a cycle it started and did
	// not finish is its own to resume after a restart.
	Owner string
	// Stale is how long another process's unfinished cycle is left alone
	// before this one takes it up (0: 15m, beyond a provider call).
	Stale time.Duration
	// DataDir holds the HEARTBEAT.md files imported at each cycle and the
	// projects whose checklists run after the global one; empty: neither.
	DataDir string
	Now     func() time.Time
}

// Runner is the heartbeat loop; Handle is its due-work handler.
type Runner struct {
	cfg Config
	// resumed: the previous slot was looked at once since start, so a
	// cycle cut off just before a boundary is resumed too.
	resumed atomic.Bool
	// toldUndeliverable: the log already says why check-ins are skipped.
	toldUndeliverable atomic.Bool
}

// New checks the dependencies and returns a runner.
func New(cfg Config) (*Runner, error) {
	switch {
	case cfg.Store == nil, cfg.Registry == nil, cfg.Provider == nil, cfg.Markers == nil, cfg.Channels == nil,
		cfg.Clock == nil, cfg.Context == nil, cfg.Prompts == nil, cfg.Logger == nil:
		return nil, errors.New("heartbeat: store, registry, provider, markers, channels, clock, context, prompts and logger are required")
	}
	cfg.Interval = cmp.Or(cfg.Interval, 30*time.Minute)
	cfg.Location = cmp.Or(cfg.Location, time.UTC)
	cfg.Parallel = cmp.Or(cfg.Parallel, 3)
	cfg.Stale = cmp.Or(cfg.Stale, 15*time.Minute)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Runner{cfg: cfg}, nil
}
