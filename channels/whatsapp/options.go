package whatsapp

import "time"

// Option customises a Channel made by NewWithClient, for tests.
type Option func(*Channel)

// WithClock replaces the clock that paces reply previews.
func WithClock(now func() time.Time) Option {
	return func(c *Channel) { c.now = now }
}

// WithTimer replaces the timer that shows a preview's latest text when
// no further update comes: after runs f once d has passed; stop cancels
// it and reports whether it had not run yet.
func WithTimer(after func(d time.Duration, f func()) (stop func() bool)) Option {
	return func(c *Channel) { c.after = after }
}
