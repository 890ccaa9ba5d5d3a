package telegram

import (
	"errors"

	"github.com/omega-gateway/omega/channels"
)

// errStalled: a getUpdates call went unanswered past its deadline.
var errStalled = errors.New("getUpdates stalled")

// pollState is the health a failed poll leaves the channel in: stalled
// when the API did not answer, else down.
func pollState(err error) string {
	if errors.Is(err, errStalled) {
		return channels.HealthStalled
	}
	return channels.HealthDown
}
