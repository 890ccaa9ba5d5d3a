package intake

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/omega-gateway/omega/domain/sender"
)

// Intake bounds. Identities are keys in indexes (PostgreSQL's btree rows
// stop at ~2.7 KB) and in stream names, so they stay small; text is
// bounded so that one message cannot fill a prompt or a row.
const (
	MaxChannelLen  = 32
	MaxIdentityLen = 256 // sender id, chat id, platform id
	MaxNameLen     = 256 // display name, after cleaning
	MaxTextLen     = 100_000
	truncatedNote  = "\n[message truncated]"
)

// ErrInvalidMessage marks a message refused at intake. Errors returned by
// ValidateIntake match it with errors.Is and name the field and reason.
var ErrInvalidMessage = errors.New("invalid message")

// InvalidMessageError says which field of a message was refused and why.
type InvalidMessageError struct {
	Field  string
	Reason string
}

func (e *InvalidMessageError) Error() string {
	return fmt.Sprintf("invalid message: %s %s", e.Field, e.Reason)
}

// Is makes errors.Is(err, ErrInvalidMessage) true.
func (e *InvalidMessageError) Is(target error) bool { return target == ErrInvalidMessage }

// Intake is the part of an incoming message the validator looks at.
type Intake struct {
	Channel, SenderID, SenderName, ChatID, PlatformID, Text string
}

// ValidateIntake returns the message as it may be recorded, or an
// *InvalidMessageError. Identities are refused rather than repaired (a
// changed id would be a different person); a display name is cleaned
// (control characters become spaces, invalid UTF-8 is replaced, it is
// cut to MaxNameLen); text keeps newlines and tabs, loses other control
// characters, is cut at maxText bytes (MaxTextLen when 0) with a note,
// and is refused when it holds a NUL or invalid UTF-8, which no program
// downstream can be trusted to carry.
func ValidateIntake(in Intake, maxText int) (Intake, error) {
	if err := checkChannel(in.Channel); err != nil {
		return in, err
	}
	if in.SenderID == "" {
		return in, &InvalidMessageError{Field: "sender_id", Reason: "is required"}
	}
	for _, f := range []struct{ name, v string }{
		{"sender_id", in.SenderID}, {"chat_id", in.ChatID}, {"platform_id", in.PlatformID},
	} {
		if err := checkIdentity(f.name, f.v); err != nil {
			return in, err
		}
	}
	if strings.TrimSpace(in.SenderID) == "" {
		return in, &InvalidMessageError{Field: "sender_id", Reason: "is blank"}
	}
	in.SenderName = cleanName(in.SenderName)
	text, err := cleanText(in.Text, maxText)
	if err != nil {
		return in, err
	}
	in.Text = text
	return in, nil
}

func checkChannel(c string) error {
	if c == "" {
		return &InvalidMessageError{Field: "channel", Reason: "is required"}
	}
	if len(c) > MaxChannelLen {
		return &InvalidMessageError{Field: "channel", Reason: fmt.Sprintf("is longer than %d bytes", MaxChannelLen)}
	}
	for _, r := range c {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' && r != '_' {
			return &InvalidMessageError{Field: "channel", Reason: "may hold only a-z, 0-9, '-' and '_'"}
		}
	}
	return nil
}

func checkIdentity(field, v string) error {
	switch {
	case len(v) > MaxIdentityLen:
		return &InvalidMessageError{Field: field, Reason: fmt.Sprintf("is longer than %d bytes (%d)", MaxIdentityLen, len(v))}
	case !utf8.ValidString(v):
		return &InvalidMessageError{Field: field, Reason: "is not valid UTF-8"}
	case strings.IndexFunc(v, isControl) >= 0:
		return &InvalidMessageError{Field: field, Reason: "holds a control character"}
	}
	return nil
}

func isControl(r rune) bool { return unicode.IsControl(r) }

func cleanName(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if isControl(r) {
			return ' '
		}
		return r
	}, s)
	return sender.TruncateUTF8(strings.TrimSpace(s), MaxNameLen)
}

func cleanText(s string, maxText int) (string, error) {
	if !utf8.ValidString(s) {
		return s, &InvalidMessageError{Field: "text", Reason: "is not valid UTF-8"}
	}
	if strings.IndexByte(s, 0) >= 0 {
		return s, &InvalidMessageError{Field: "text", Reason: "holds a NUL byte"}
	}
	s = strings.Map(func(r rune) rune {
		if r != '\n' && r != '\t' && r != '\r' && isControl(r) {
			return -1
		}
		return r
	}, s)
	if maxText <= 0 {
		maxText = MaxTextLen
	}
	if len(s) > maxText {
		s = sender.TruncateUTF8(s, maxText) + truncatedNote
	}
	return s, nil
}
