package app_test

import (
	"strings"
	"testing"

	"github.com/omega-gateway/omega/domain"
)

// /heartbeat shows a "## Section" header as the section it is, not as an
// item, and an interval of one minute without a wrong plural.
func TestHeartbeatCommandShowsSections(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			n, api, _ := heartbeatNode(t, b, nil)
			setChecklist(t, n, domain.GlobalHeartbeat,
				domain.HeartbeatItemAdded{Item: "Check the backups"},
				domain.HeartbeatItemAdded{Item: "## Trading — autonomous engine"},
				domain.HeartbeatItemAdded{Item: "Review positions"},
				domain.HeartbeatIntervalSet{Minutes: 1})
			api.PushText(42, 42, "/heartbeat")
			// The first contact is welcomed before the answer.
			waitFor(t, "/heartbeat answer", func() bool { return len(heartbeatMessages(api)) >= 2 })
			report := heartbeatMessages(api)[1]
			for _, want := range []string{"• Check the backups", "\nTrading:\n• Review positions", "1 min."} {
				if !strings.Contains(report, want) {
					t.Errorf("/heartbeat lacks %q:\n%s", want, report)
				}
			}
			if strings.Contains(report, "## Trading") || strings.Contains(report, "1 minutes") {
				t.Errorf("/heartbeat:\n%s", report)
			}
		})
	}
}
