package channels

import "time"

// Health states a receiving channel reports.
const (
	HealthUp      = "up"      // receiving (again)
	HealthDown    = "down"    // the platform refuses or fails requests
	HealthStalled = "stalled" // a receive call went unanswered past its deadline
)

// Health is one change of a channel's ability to receive.
type Health struct {
	Channel string
	State   string // HealthUp, HealthDown or HealthStalled
	// Err is the failure that changed the state; empty when up.
	Err string
	// Failures counts the failed receive calls since the channel was last
	// up (on HealthUp: the failures the outage lasted).
	Failures int
	At       time.Time
}

// HealthFunc receives a channel's health changes, from the channel's
// receiving goroutine; it must return promptly.
type HealthFunc func(Health)

// HealthReporter is implemented by channels that report when they stop
// and resume receiving, so a silent outage becomes an event, a metric and
// an owner alert. The process sets the function before Start.
type HealthReporter interface {
	ReportHealth(f HealthFunc)
}
