package app_test

import (
	"context"
	"strings"
	"testing"

	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
	"github.com/omega-gateway/omega/domain/heartbeat"
	"github.com/omega-gateway/omega/domain/learning"
	"github.com/omega-gateway/omega/domain/system"
	"github.com/omega-gateway/omega/handlers/apply"
)

// BUG_REPORT and LIMITATION alert the owner (the first allowlisted
// Telegram user) through the Telegram double; a LIMITATION also puts an
// item on the heartbeat checklist; both are in the reports read model that
// `omega bugs` lists. A limitation reported again alerts nobody.
func TestReportsAlertTheOwnerAndLimitationAddsAHeartbeatItem(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			claude, _ := scriptedClaude(t, map[string]string{
				"reminder broke": `Sorry about that.\nBUG_REPORT: the reminder fired twice`,
				"calendar":       `I cannot do that yet.\nLIMITATION: No calendar | I cannot read calendars | add a calendar tool`,
			})
			api := telegramtest.New(t, tgToken)
			vars := telegramVars(baseVars(t, b, claude), api, "42,77")
			vars["OMEGA_HEARTBEAT_ENABLED"] = "false"
			n := startTelegramNode(t, vars)
			ctx := context.Background()

			n.waitTurn(t, tgTurnID(77, api.PushText(77, 77, "my reminder broke")))
			n.waitTurn(t, tgTurnID(77, api.PushText(77, 77, "read my calendar")))
			n.waitTurn(t, tgTurnID(77, api.PushText(77, 77, "and the calendar again")))

			var alerts []string
			for _, c := range api.Messages(42) {
				alerts = append(alerts, c.Text)
			}
			if len(alerts) != 2 || !strings.Contains(alerts[0], "Bug report") || !strings.Contains(alerts[0], "the reminder fired twice") ||
				!strings.Contains(alerts[1], "No calendar") || !strings.Contains(alerts[1], "add a calendar tool") {
				t.Fatalf("the owner got %q, want one bug alert and one limitation alert", alerts)
			}
			for _, c := range api.Messages(77) {
				if strings.Contains(c.Text, "BUG_REPORT") || strings.Contains(c.Text, "LIMITATION") {
					t.Fatalf("a marker reached the user: %q", c.Text)
				}
			}

			hb, err := n.rt.Store.Load(ctx, heartbeat.HeartbeatStream(heartbeat.GlobalHeartbeat), 1)
			if err != nil {
				t.Fatal(err)
			}
			added := 0
			for _, e := range hb {
				if e.Type == (heartbeat.HeartbeatItemAdded{}).EventType() && strings.Contains(string(e.Data), apply.LimitationItem("No calendar")) {
					added++
				}
			}
			if added != 1 {
				t.Fatalf("heartbeat item added %d times, want 1", added)
			}
			for stream, want := range map[string]int{learning.BugReportsStream: 1, learning.LimitationsStream: 1} {
				evs, err := n.rt.Store.Load(ctx, stream, 1)
				if err != nil {
					t.Fatal(err)
				}
				if got := countType(evs, (system.OwnerAlerted{}).EventType()); got != want {
					t.Fatalf("%s: OwnerAlerted %d times, want %d", stream, got, want)
				}
			}
			waitFor(t, "the reports read model", func() bool {
				return n.queryInt(t, `SELECT COUNT(*) FROM reports WHERE sender = 'telegram:77'`) == 2
			})
		})
	}
}
