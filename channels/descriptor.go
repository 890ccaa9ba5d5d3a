package channels

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
)

// Descriptor is everything omega needs to know about a channel apart from
// the channel itself: its settings, its doctor check, its platform hint
// and what it can do. The registry (channels/registry) lists one per
// channel, and configuration, secrets, the heartbeat's destination,
// `omega doctor`, `omega rerun` and the server's wiring iterate it, so
// adding a channel is its package and one line there.
type Descriptor struct {
	Name  string
	Title string // the platform's name in sentences ("WhatsApp")
	// Settings returns fresh settings: a pointer to a struct whose fields
	// carry caarlos0/env tags (read under the OMEGA_ prefix, with their
	// defaults).
	Settings func() Settings
	// Hint is the platform line the system prompt quotes for the channel
	// (the channel's FormatHint).
	Hint         string
	Capabilities Capabilities
	// ChatForm names what addresses a chat in "<channel>:<chat>" targets
	// ("number"); empty is "chat".
	ChatForm string
	// Build starts nothing: it makes the channel from enabled settings.
	Build func(ctx context.Context, s Settings, env Env) (Channel, error)
	// Doctor checks enabled settings (credentials, reachability) for
	// `omega doctor`.
	Doctor func(ctx context.Context, s Settings, env Env) []Finding
	// Pair links a device to the channel from the terminal (`omega
	// whatsapp pair`); nil when the channel needs no pairing.
	Pair func(ctx context.Context, s Settings, env Env, out io.Writer, phone string) error
}

// Capabilities say what a channel can do.
type Capabilities struct {
	Images bool // receives and sends images
	Edits  bool // edits a message it sent
	Typing bool // shows a typing indicator
	Groups bool // takes part in group chats
	// Alerts: the channel can be a heartbeat or owner-alert destination
	// (OMEGA_HEARTBEAT_TARGET=<name>:<chat>).
	Alerts bool
	// QRPairing: the channel links its device by QR codes another channel
	// shows (/whatsapp).
	QRPairing bool
}

// Settings are one channel's configuration.
type Settings interface {
	// On reports whether the configuration turns the channel on.
	On() bool
	// Validate reports what is wrong with enabled settings, naming the
	// OMEGA_ variables, never a secret's value.
	Validate() error
	// Secrets are the values every log line and doctor output masks.
	Secrets() []string
	// Allowed are the sender ids allowlisted on the channel.
	Allowed() []string
	// AllowlistVar names the variable that lists them ("" for a channel
	// that needs none).
	AllowlistVar() string
	// EnableVar is what to set to turn the channel on, for hints
	// ("OMEGA_TELEGRAM_TOKEN").
	EnableVar() string
}

// Configs are the channels' settings by channel name.
type Configs map[string]Settings

// Env is what building or checking a channel may use beyond its settings.
type Env struct {
	Logger *slog.Logger
	// DB and Dialect are omega's database, for a channel library that
	// keeps tables of its own (WhatsApp's device store); DB is nil where
	// there is no database yet.
	DB      *sql.DB
	Dialect string
	// QRPairing: a channel that pairs by QR code is on, so commands for it
	// are offered.
	QRPairing bool
	// NotifyOwner tells the owner about a problem on another channel.
	NotifyOwner func(ctx context.Context, text string)
}

// Finding is one line of a doctor check.
type Finding struct {
	Level  Level
	Detail string
	Fix    string // for LevelFail
}

// Level grades a Finding.
type Level int

// The levels of a Finding.
const (
	LevelOK Level = iota
	LevelWarn
	LevelFail
)

// OK, Warn and Fail build findings.
func OK(detail string) Finding        { return Finding{Level: LevelOK, Detail: detail} }
func Warn(detail string) Finding      { return Finding{Level: LevelWarn, Detail: detail} }
func Fail(detail, fix string) Finding { return Finding{Level: LevelFail, Detail: detail, Fix: fix} }
