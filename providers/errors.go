package providers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Class groups provider failures by what the caller should do about them.
type Class int

const (
	Unknown     Class = iota
	RateLimited       // the provider asked us to slow down
	Auth              // the key or login was refused
	Server            // the provider (or the network to it) failed
	Timeout           // no answer within the deadline
	BadRequest        // the provider rejected what we sent
	Malformed         // the provider answered something we cannot parse
	Unavailable       // the provider cannot work at all: missing binary or key
	OverBudget        // a spending limit refused the call: it was not made
)

var classNames = [...]string{
	Unknown:     "unknown",
	RateLimited: "rate limited",
	Auth:        "auth",
	Server:      "server",
	Timeout:     "timeout",
	BadRequest:  "bad request",
	Malformed:   "malformed",
	Unavailable: "unavailable",
	OverBudget:  "over budget",
}

func (c Class) String() string {
	if c < 0 || int(c) >= len(classNames) {
		return fmt.Sprintf("class(%d)", int(c))
	}
	return classNames[c]
}

// Retryable reports whether trying the same request again may succeed.
func (c Class) Retryable() bool {
	return c == RateLimited || c == Server || c == Timeout
}

// Error is a classified provider failure. Msg and Err never carry secrets:
// providers build them from status codes, provider error messages and
// trimmed process output only.
type Error struct {
	Class      Class
	Status     int           // HTTP status or process exit code; 0 when none
	RetryAfter time.Duration // server hint for RateLimited; 0 when none
	// Until is, for OverBudget, when the limit that refused the call resets.
	Until    time.Time
	Provider string
	Msg      string
	Err      error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Provider)
	b.WriteString(": ")
	b.WriteString(e.Class.String())
	if e.Status != 0 {
		fmt.Fprintf(&b, " (status %d)", e.Status)
	}
	if e.Msg != "" {
		b.WriteString(": ")
		b.WriteString(e.Msg)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// ClassOf returns the class of err: the class of the first *Error in its
// chain, Timeout for a deadline, Unknown otherwise.
func ClassOf(err error) Class {
	var pe *Error
	if errors.As(err, &pe) {
		return pe.Class
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return Timeout
	}
	return Unknown
}

// FriendlyError is a short English sentence for the user about err. It never
// contains the raw error, which may be technical or long; the caller
// localizes it.
func FriendlyError(err error) string {
	switch ClassOf(err) {
	case Timeout:
		return "I took too long to respond. Please try again."
	case RateLimited:
		return "I'm receiving too many requests right now. Please try again in a minute."
	case Auth:
		return "I can't reach my AI provider because its credentials were refused. My owner needs to check the configuration."
	case Server:
		return "My AI provider is having trouble right now. Please try again shortly."
	case BadRequest:
		return "My AI provider rejected this request. Please try rephrasing it."
	case Malformed:
		return "I got an unreadable answer from my AI provider. Please try again."
	case Unavailable:
		return "My AI provider isn't set up yet. My owner needs to finish the configuration."
	case OverBudget:
		return "My spending limit is used up for now. Please try again after it resets."
	default:
		return "Something went wrong. Please try again."
	}
}

// RefusedUntil is when the spending limit that refused a call resets; nil
// when err is no such refusal (see OverBudget).
func RefusedUntil(err error) *time.Time {
	if pe := (*Error)(nil); errors.As(err, &pe) && ClassOf(err) == OverBudget {
		return &pe.Until
	}
	return nil
}

// Excerpt trims s to at most n bytes on a rune boundary, for error messages
// that quote process output or response bodies.
func Excerpt(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
