package telegram

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Group modes.
const (
	GroupModeMention = "mention" // deliver group messages that mention or reply to the bot
	GroupModeAll     = "all"     // deliver every group message
)

// Config configures the Telegram channel. The lead nests it under the
// OMEGA_ prefix.
type Config struct {
	Token  string `env:"TELEGRAM_TOKEN"`
	APIURL string `env:"TELEGRAM_API_URL" envDefault:"https://api.telegram.org"`
	// AllowedUsers are Telegram user ids; the pipeline enforces them.
	AllowedUsers UserIDs `env:"TELEGRAM_ALLOWED_USERS"`
	GroupMode    string  `env:"TELEGRAM_GROUP_MODE" envDefault:"mention"`
	// TranscribeURL is an OpenAI-compatible base URL (ending in /v1);
	// empty disables voice transcription.
	TranscribeURL    string `env:"TRANSCRIBE_URL"`
	TranscribeAPIKey string `env:"TRANSCRIBE_API_KEY"`
	TranscribeModel  string `env:"TRANSCRIBE_MODEL" envDefault:"whisper-1"`
	// PollTimeout is getUpdates' long-poll timeout (whole seconds).
	PollTimeout time.Duration `env:"TELEGRAM_POLL_TIMEOUT" envDefault:"30s"`
	// StallGrace is how long past PollTimeout a getUpdates may go
	// unanswered before it is abandoned as stalled.
	StallGrace time.Duration `env:"TELEGRAM_STALL_GRACE" envDefault:"5s"`
	// BackoffMax caps the wait between failed calls, so polling resumes
	// within it once the Bot API answers again.
	BackoffMax time.Duration `env:"TELEGRAM_BACKOFF_MAX" envDefault:"5s"`
}

// Validate reports configuration errors. It never includes the token.
func (c Config) Validate() error {
	if c.Token == "" {
		return fmt.Errorf("telegram: TELEGRAM_TOKEN is empty")
	}
	switch c.GroupMode {
	case GroupModeMention, GroupModeAll, "":
	default:
		return fmt.Errorf("telegram: TELEGRAM_GROUP_MODE %q: want mention or all", c.GroupMode)
	}
	if c.PollTimeout < 0 || c.StallGrace < 0 || c.BackoffMax < 0 {
		return fmt.Errorf("telegram: TELEGRAM_POLL_TIMEOUT, TELEGRAM_STALL_GRACE and TELEGRAM_BACKOFF_MAX must not be negative")
	}
	return nil
}

// AllowedUserIDs returns the allowed users as the string sender ids the
// channel puts in channels.Incoming.SenderID.
func (c Config) AllowedUserIDs() []string {
	ids := make([]string, 0, len(c.AllowedUsers))
	for _, id := range c.AllowedUsers {
		ids = append(ids, strconv.FormatInt(id, 10))
	}
	return ids
}

// UserIDs is a comma-separated list of Telegram user ids in the
// environment ("1, 2" is accepted).
type UserIDs []int64

// UnmarshalText implements encoding.TextUnmarshaler for caarlos0/env.
func (u *UserIDs) UnmarshalText(b []byte) error {
	ids, err := ParseAllowedUsers(string(b))
	if err != nil {
		return err
	}
	*u = ids
	return nil
}

// ParseAllowedUsers parses a comma-separated list of user ids, for
// callers that read the list without caarlos0/env.
func ParseAllowedUsers(s string) ([]int64, error) {
	var ids []int64
	for _, field := range strings.Split(s, ",") {
		field = strings.TrimSpace(field)
		if field == "" {
			continue
		}
		id, err := strconv.ParseInt(field, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("telegram allowed user %q: %w", field, err)
		}
		ids = append(ids, id)
	}
	return ids, nil
}
