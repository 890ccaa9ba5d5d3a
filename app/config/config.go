// Package config reads omega's configuration from OMEGA_* environment
// variables and validates all of it before anything starts.
package config

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/caarlos0/env/v11"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/registry"
	"github.com/omega-gateway/omega/domain/heartbeat"
	"github.com/omega-gateway/omega/providers"
)

// Config is the whole configuration. Every field is documented in the
// README's configuration table; keep the two in step.
type Config struct {
	DataDir     string `env:"DATA_DIR" envDefault:"~/.omega"`
	DatabaseURL string `env:"DATABASE_URL"`
	LogLevel    string `env:"LOG_LEVEL" envDefault:"info"`
	LogFormat   string `env:"LOG_FORMAT" envDefault:"text"`

	// HTTPAddr is set to defaultHTTPAddr when OMEGA_HTTP_ADDR is unset;
	// set but empty, it turns the HTTP channel off (an envDefault would
	// apply to the empty value too).
	HTTPAddr string `env:"HTTP_ADDR"`
	APIToken string `env:"API_TOKEN"`
	// ReadyMaxLag is how far projections may trail the log before /readyz
	// answers not ready.
	ReadyMaxLag time.Duration `env:"READY_MAX_LAG" envDefault:"1m"`
	// ChannelDownAlert is how long a channel may stay unable to receive
	// (down or stalled) before the owner is alerted; 0 never alerts.
	ChannelDownAlert time.Duration `env:"CHANNEL_DOWN_ALERT" envDefault:"5m"`

	// ConversationIdle is how long a conversation may rest before the next
	// message starts a new one.
	ConversationIdle time.Duration `env:"CONVERSATION_IDLE" envDefault:"2h"`
	// CoalesceWindow merges a sender's messages that follow each other
	// within it into one turn; 0 turns coalescing off.
	CoalesceWindow time.Duration `env:"COALESCE_WINDOW" envDefault:"0s"`
	Timezone       string        `env:"TIMEZONE" envDefault:"Local"`
	// BudgetDaily and BudgetMonthly limit what every provider call
	// together may spend per day and per month in OMEGA_TIMEZONE
	// ("50000tok", "2.50usd", or both: "50000tok,2.50usd"); empty is no
	// limit. See budget.go.
	BudgetDaily   string `env:"BUDGET_DAILY"`
	BudgetMonthly string `env:"BUDGET_MONTHLY"`
	// BudgetRunawayCalls provider calls of one background loop (heartbeat,
	// self-heal, a sender's scheduled actions) within BudgetRunawayWindow
	// are allowed; the next pauses it until the window has room and alerts
	// the owner. 0 turns it off.
	BudgetRunawayCalls  int           `env:"BUDGET_RUNAWAY_CALLS" envDefault:"60"`
	BudgetRunawayWindow time.Duration `env:"BUDGET_RUNAWAY_WINDOW" envDefault:"10m"`
	// Workspace is where the provider works and inbox attachments are
	// saved; empty means DATA_DIR/workspace.
	Workspace    string        `env:"WORKSPACE"`
	HistoryLimit int           `env:"HISTORY_LIMIT" envDefault:"20"`
	LeaseTTL     time.Duration `env:"LEASE_TTL" envDefault:"15s"`
	StatusFirst  time.Duration `env:"STATUS_FIRST" envDefault:"15s"`
	StatusEvery  time.Duration `env:"STATUS_EVERY" envDefault:"120s"`
	// Classify sends each message through a fast classification call that
	// answers it directly or runs it as a multi-step plan.
	Classify bool `env:"CLASSIFY" envDefault:"true"`
	// ClaudeMD keeps the workspace's CLAUDE.md: the template deployed at
	// start, its generated section listing the projects and skills.
	ClaudeMD bool `env:"CLAUDE_MD" envDefault:"true"`
	// Streaming shows replies while the model writes them, where the
	// provider can stream: "on" (default) or "off" (sent whole).
	Streaming string `env:"STREAMING" envDefault:"on"`
	// ShutdownTimeout bounds the work done after SIGINT/SIGTERM (open
	// conversations summarized); what does not finish is done at the
	// next start.
	ShutdownTimeout time.Duration `env:"SHUTDOWN_TIMEOUT" envDefault:"20s"`
	// TaskLateAfter is how far past its due time a task fires before its
	// message says it is late (omega was down when it fell due).
	TaskLateAfter time.Duration `env:"TASK_LATE_AFTER" envDefault:"1m"`
	// ApplierTTL bounds how long the read models go without an applier
	// after the PostgreSQL process applying them stopped answering.
	ApplierTTL time.Duration `env:"APPLIER_TTL" envDefault:"5s"`

	// The heartbeat: periodic check-ins on the checklist in the log.
	HeartbeatEnabled bool `env:"HEARTBEAT_ENABLED" envDefault:"true"`
	// HeartbeatInterval applies until a HEARTBEAT_INTERVAL marker is recorded.
	HeartbeatInterval time.Duration `env:"HEARTBEAT_INTERVAL" envDefault:"30m"`
	// HeartbeatActiveHours is "HH:MM-HH:MM" in OMEGA_TIMEZONE; empty is always.
	HeartbeatActiveHours string `env:"HEARTBEAT_ACTIVE_HOURS"`
	// HeartbeatTarget is telegram:<chat> or whatsapp:<number>; empty is the owner.
	HeartbeatTarget string `env:"HEARTBEAT_TARGET"`

	// Sender pairing: an unknown sender on Telegram or WhatsApp gets a code
	// the owner approves (/pair, omega pairing); off: they are denied.
	PairingEnabled bool          `env:"PAIRING_ENABLED" envDefault:"true"`
	PairingCodeTTL time.Duration `env:"PAIRING_CODE_TTL" envDefault:"1h"`
	// PairingMaxCodes bounds the codes one sender gets per hour.
	PairingMaxCodes int `env:"PAIRING_MAX_CODES" envDefault:"3"`

	// SelfHealDelay is the pause between a self-healing iteration and its
	// follow-up.
	SelfHealDelay time.Duration `env:"SELF_HEAL_DELAY" envDefault:"2m"`

	// GCPercent is the garbage collector's GOGC for `omega serve`: the heap
	// may grow by this percentage of the live heap before a collection. 50
	// (instead of Go's 100) cuts the peak under load by a sixth for a few
	// more collections of a small heap (docs/BENCHMARKS.md, issue 12); a
	// GOGC environment variable wins.
	GCPercent int `env:"GOGC" envDefault:"50"`
	// MemoryLimit is a soft limit on the Go runtime's memory for `omega
	// serve` (debug.SetMemoryLimit): near it the collector works harder
	// (never past half the CPU) instead of the heap growing; 0 is none. A
	// GOMEMLIMIT environment variable wins.
	MemoryLimit ByteSize `env:"MEMORY_LIMIT" envDefault:"0"`

	Provider providers.Config
	// Channels are the channels' own settings by name, each read from the
	// fields its descriptor declares (channels/registry). They are
	// pointers: a copy of Config shares them.
	Channels channels.Configs `env:"-"`
	// descriptors are the channels these settings were read for.
	descriptors []channels.Descriptor
}

// defaultHTTPAddr is where the HTTP channel listens unless told otherwise.
const defaultHTTPAddr = "127.0.0.1:8787"

// Load parses the environment (OMEGA_ prefix) and validates the result,
// reporting every problem at once.
func Load() (Config, error) {
	return parse(env.Options{Prefix: "OMEGA_"}, registry.All())
}

// LoadFrom parses the given variables instead of the process environment.
func LoadFrom(vars map[string]string) (Config, error) {
	return LoadChannels(vars, registry.All())
}

// LoadChannels parses the given variables for the given channels instead
// of the registry's.
func LoadChannels(vars map[string]string, descs []channels.Descriptor) (Config, error) {
	return parse(env.Options{Prefix: "OMEGA_", Environment: vars}, descs)
}

func parse(opts env.Options, descs []channels.Descriptor) (Config, error) {
	c := Config{Channels: channels.Configs{}, descriptors: descs}
	// Every variable that does not parse is reported at once, the
	// channels' beside omega's own.
	var errs []error
	if err := env.ParseWithOptions(&c, opts); err != nil {
		errs = unreadable(err, &c, opts)
	}
	for _, d := range descs {
		if d.Settings == nil {
			continue
		}
		s := d.Settings()
		if err := env.ParseWithOptions(s, opts); err != nil {
			errs = append(errs, unreadable(err, s, opts)...)
		}
		c.Channels[d.Name] = s
	}
	if len(errs) > 0 {
		// With the other problems, but not a second word on a variable
		// that was not read.
		for _, p := range c.problems() {
			if !slices.ContainsFunc(errs, func(e error) bool { return sameVariable(e, p) }) {
				errs = append(errs, p)
			}
		}
		return c, fmt.Errorf("%w:\n  - %w", ErrInvalid, lines(errs))
	}
	if _, set := lookup(opts, opts.Prefix+"HTTP_ADDR"); !set {
		c.HTTPAddr = defaultHTTPAddr
	}
	dir, err := expandHome(c.DataDir)
	if err != nil {
		return c, fmt.Errorf("configuration: OMEGA_DATA_DIR: %w", err)
	}
	c.DataDir = dir
	if err := c.Validate(); err != nil {
		return c, err
	}
	return c, nil
}

// Validate checks every field and joins all problems into one error.
func (c Config) Validate() error {
	if errs := c.problems(); len(errs) > 0 {
		return fmt.Errorf("%w:\n  - %w", ErrInvalid, lines(errs))
	}
	return nil
}

// problems lists what is wrong with the configuration, each naming its
// variable first.
func (c Config) problems() []error {
	var p problems
	c.validateStorage(&p)
	c.validateTimes(&p)
	c.validateStreaming(&p)
	c.validateProvider(&p)
	c.validateHeartbeat(&p)
	c.validateBudget(&p)
	return p.errs
}

// problems collects what is wrong with a configuration.
type problems struct{ errs []error }

func (p *problems) bad(format string, a ...any) { p.errs = append(p.errs, fmt.Errorf(format, a...)) }

// validateStorage checks where data lives and how omega logs.
func (c Config) validateStorage(p *problems) {
	bad := p.bad
	if c.DataDir == "" {
		bad("OMEGA_DATA_DIR must not be empty")
	}
	if c.DatabaseURL != "" {
		u, err := url.Parse(c.DatabaseURL)
		switch {
		case err != nil:
			bad("OMEGA_DATABASE_URL is not a URL (postgres://user:pass@host:5432/db?sslmode=disable)")
		case u.Scheme != "postgres" && u.Scheme != "postgresql":
			bad("OMEGA_DATABASE_URL must start with postgres:// (got %q); leave it unset for the embedded SQLite store", u.Scheme)
		}
	}
	if _, ok := levels[strings.ToLower(c.LogLevel)]; !ok {
		bad("OMEGA_LOG_LEVEL must be debug, info, warn or error (got %q)", c.LogLevel)
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		bad("OMEGA_LOG_FORMAT must be text or json (got %q)", c.LogFormat)
	}
	if c.HTTPAddr != "" {
		// A non-loopback address without OMEGA_API_TOKEN is valid: `omega
		// serve` generates a token for it (config.EnsureAPIToken).
		if _, _, err := net.SplitHostPort(c.HTTPAddr); err != nil {
			bad("OMEGA_HTTP_ADDR must be host:port (got %q)", c.HTTPAddr)
		}
	}
}

// validateTimes checks limits and durations.
func (c Config) validateTimes(p *problems) {
	bad := p.bad
	if c.HistoryLimit < 0 {
		bad("OMEGA_HISTORY_LIMIT must not be negative (got %d)", c.HistoryLimit)
	}
	if c.LeaseTTL < time.Second {
		bad("OMEGA_LEASE_TTL must be at least 1s (got %s)", c.LeaseTTL)
	}
	if c.ApplierTTL < 500*time.Millisecond {
		bad("OMEGA_APPLIER_TTL must be at least 500ms (got %s)", c.ApplierTTL)
	}
	if c.StatusFirst < 0 || c.StatusEvery <= 0 {
		bad("OMEGA_STATUS_FIRST must not be negative and OMEGA_STATUS_EVERY must be positive")
	}
	if c.ShutdownTimeout < 0 {
		bad("OMEGA_SHUTDOWN_TIMEOUT must not be negative (got %s)", c.ShutdownTimeout)
	}
	if c.CoalesceWindow < 0 || c.CoalesceWindow > time.Minute {
		p.bad("OMEGA_COALESCE_WINDOW must be between 0 (off) and 1m (got %s)", c.CoalesceWindow)
	}
	if c.ConversationIdle <= 0 {
		bad("OMEGA_CONVERSATION_IDLE must be positive (got %s)", c.ConversationIdle)
	}
	if _, err := c.Location(); err != nil {
		bad("OMEGA_TIMEZONE %q is not a known time zone", c.Timezone)
	}
	if c.GCPercent < 1 {
		bad("OMEGA_GOGC must be at least 1 (got %d)", c.GCPercent)
	}
	if c.MemoryLimit < 0 {
		bad("OMEGA_MEMORY_LIMIT must not be negative (got %d)", c.MemoryLimit)
	}
	if c.PairingCodeTTL < time.Minute || c.PairingMaxCodes < 1 {
		bad("OMEGA_PAIRING_CODE_TTL must be at least 1m and OMEGA_PAIRING_MAX_CODES at least 1 (got %s, %d)", c.PairingCodeTTL, c.PairingMaxCodes)
	}
}

// validateProvider checks the provider and the channels' settings.
func (c Config) validateProvider(p *problems) {
	bad := p.bad
	if _, err := providers.ParseSandbox(c.Provider.Sandbox); err != nil {
		bad("OMEGA_SANDBOX: %v", err)
	}
	switch c.Provider.Provider {
	case providers.NameClaudeCode, providers.NameAnthropic, providers.NameOpenAI:
	default:
		bad("OMEGA_PROVIDER must be %s, %s or %s (got %q)", providers.NameClaudeCode, providers.NameAnthropic, providers.NameOpenAI, c.Provider.Provider)
	}
	for _, d := range c.Descriptors() {
		if s, ok := c.Channels[d.Name]; ok && s.On() {
			if err := s.Validate(); err != nil {
				bad("%v", err)
			}
		}
	}
}

// Descriptors are the channels this configuration was read for: the
// registry's unless it was loaded with others.
func (c Config) Descriptors() []channels.Descriptor {
	if c.descriptors == nil {
		return registry.All()
	}
	return c.descriptors
}

// Enabled are the channels the configuration turns on, in the registry's
// order, with their settings.
func (c Config) Enabled() []Enabled {
	var out []Enabled
	for _, d := range c.Descriptors() {
		if s, ok := c.Channels[d.Name]; ok && s.On() {
			out = append(out, Enabled{Descriptor: d, Settings: s})
		}
	}
	return out
}

// Enabled is a channel turned on and its settings.
type Enabled struct {
	channels.Descriptor
	Settings channels.Settings
}

// validateHeartbeat checks the heartbeat's interval, hours and target.
func (c Config) validateHeartbeat(p *problems) {
	bad := p.bad
	if c.HeartbeatInterval < time.Second {
		bad("OMEGA_HEARTBEAT_INTERVAL must be at least 1s (got %s)", c.HeartbeatInterval)
	}
	if _, err := heartbeat.ParseActiveHours(c.HeartbeatActiveHours); err != nil {
		bad("OMEGA_HEARTBEAT_ACTIVE_HOURS: %v", err)
	}
	if _, _, err := c.HeartbeatDestination(); err != nil {
		bad("OMEGA_HEARTBEAT_TARGET: %v", err)
	}
}

// HeartbeatDestination is where heartbeat alerts go: the configured
// target, else the owner (the first allowlisted sender of the first
// enabled alert channel, in the registry's order: Telegram, then
// WhatsApp); empty when there is none.
func (c Config) HeartbeatDestination() (channel, chat string, err error) {
	if t := strings.TrimSpace(c.HeartbeatTarget); t != "" {
		ch, chat, ok := strings.Cut(t, ":")
		if !ok || strings.TrimSpace(chat) == "" || !c.alertChannel(ch) {
			return "", "", fmt.Errorf("want %s (got %q)", c.alertForms(), t)
		}
		return ch, strings.TrimSpace(chat), nil
	}
	for _, e := range c.Enabled() {
		if ids := e.Settings.Allowed(); e.Capabilities.Alerts && len(ids) > 0 {
			return e.Name, ids[0], nil
		}
	}
	return "", "", nil
}

func (c Config) alertChannel(name string) bool {
	return slices.ContainsFunc(c.Descriptors(), func(d channels.Descriptor) bool { return d.Name == name && d.Capabilities.Alerts })
}

// alertForms lists the target forms: "telegram:<chat> or whatsapp:<chat>".
func (c Config) alertForms() string {
	var forms []string
	for _, d := range c.Descriptors() {
		if d.Capabilities.Alerts {
			forms = append(forms, d.Name+":<"+cmp.Or(d.ChatForm, "chat")+">")
		}
	}
	return strings.Join(forms, " or ")
}

// Location returns the time zone used to interpret times without offset.
func (c Config) Location() (*time.Location, error) {
	if c.Timezone == "" || c.Timezone == "Local" {
		return time.Local, nil
	}
	return time.LoadLocation(c.Timezone)
}

// WorkspaceDir is where the provider works.
func (c Config) WorkspaceDir() string {
	if c.Workspace != "" {
		return c.Workspace
	}
	return filepath.Join(c.DataDir, "workspace")
}

// SQLitePath is where the embedded store lives.
func (c Config) SQLitePath() string { return filepath.Join(c.DataDir, "omega.db") }

// Backend names the store the configuration selects.
func (c Config) Backend() string {
	if c.DatabaseURL != "" {
		return "postgres"
	}
	return "sqlite"
}

var levels = map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}

// Logger builds the process logger; it masks every configured secret.
func (c Config) Logger() *slog.Logger {
	opts := &slog.HandlerOptions{Level: levels[strings.ToLower(c.LogLevel)]}
	var h slog.Handler = slog.NewTextHandler(os.Stderr, opts)
	if c.LogFormat == "json" {
		h = slog.NewJSONHandler(os.Stderr, opts)
	}
	// Secrets are masked in every line, whatever text carried them in.
	return slog.New(c.Redactor().Handler(h))
}

// HTTPNeedsToken reports whether the API listens beyond loopback, where it
// must not run without a token.
func (c Config) HTTPNeedsToken() bool {
	host, _, err := net.SplitHostPort(c.HTTPAddr)
	return c.HTTPAddr != "" && (err != nil || !isLoopback(host))
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func expandHome(p string) (string, error) {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find home directory for %q: %w", p, err)
	}
	return filepath.Join(home, strings.TrimPrefix(p, "~")), nil
}

type lines []error

func (l lines) Error() string {
	parts := make([]string, len(l))
	for i, e := range l {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n  - ")
}

func (l lines) Unwrap() []error { return l }

// ErrInvalid is matched by errors.Is for any validation failure.
var ErrInvalid = errors.New("invalid configuration")

// validateStreaming checks OMEGA_STREAMING.
func (c Config) validateStreaming(p *problems) {
	if c.Streaming != "on" && c.Streaming != "off" {
		p.bad("OMEGA_STREAMING must be on or off (got %q)", c.Streaming)
	}
}

// StreamReplies reports whether replies show while they are written.
func (c Config) StreamReplies() bool { return c.Streaming != "off" }
