package app_test

import (
	"fmt"
	"testing"

	"github.com/omega-gateway/omega/app"
)

// A sender who writes again as soon as each reply is in (the turn
// completed) never has anything queued, so is never acknowledged: not
// while the read models still show the previous turn open, nor when a
// worker starts afresh behind them. (Before, 1 to 16 of these 100
// messages were acknowledged on PostgreSQL.)
func TestNoAcknowledgementWithoutAQueue(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			vars := b.env(t)
			vars["OMEGA_DATA_DIR"], vars["HOME"], vars["OMEGA_STATUS_FIRST"] = t.TempDir(), t.TempDir(), "0s"
			n := startNodeWith(t, vars, app.RuntimeOptions{Provider: instantProvider{}})
			for i := range 100 {
				out, err := sendTurn(n.url, "closed-loop", fmt.Sprintf("message %d", i))
				if err != nil {
					t.Fatal(err)
				}
				if out.Acknowledged {
					t.Errorf("message %d was acknowledged as queued", i)
				}
			}
			var acks int
			if err := n.rt.DBForTests().QueryRow("SELECT count(*) FROM events WHERE type = 'AckSent'").Scan(&acks); err != nil {
				t.Fatal(err)
			}
			if acks > 0 {
				t.Errorf("%d AckSent recorded, want none", acks)
			}
		})
	}
}
