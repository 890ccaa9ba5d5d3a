package rerun

import (
	"slices"
	"testing"

	"github.com/omega-gateway/omega/app/config"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
)

// A turn recorded before decision inputs were re-runs with the allowlist
// its recorded decision implies, whatever the shell configures.
func TestLegacyInputsFollowTheRecordedDecision(t *testing.T) {
	msg := turn.MessageReceived{Channel: "telegram", SenderID: "42"}
	var shell config.Config // no Telegram, no WhatsApp
	tests := []struct {
		reason string
		want   []string
		listed bool
	}{
		{"allowlisted on telegram", []string{"42"}, true},
		{"paired on telegram (approved by the owner)", []string{}, true},
		{"unknown sender telegram:42: pairing code ABCDEF issued", []string{}, true},
		{"sender 42 is not on the telegram allowlist", []string{}, true},
		{"no allowlist configured for channel telegram (deny by default)", nil, false},
	}
	for _, tt := range tests {
		var decided domain.Payload = turn.AccessDenied{Reason: tt.reason}
		if tt.reason == "allowlisted on telegram" || tt.reason[:6] == "paired" {
			decided = turn.AccessGranted{Reason: tt.reason}
		}
		in := legacyInputs(shell, []domain.Payload{msg, decided}, msg)
		got, listed := in.Allowed["telegram"]
		if listed != tt.listed || listed && !slices.Equal(got, tt.want) {
			t.Errorf("%q: allowlist %q (listed %v), want %q (listed %v)", tt.reason, got, listed, tt.want, tt.listed)
		}
	}
}
