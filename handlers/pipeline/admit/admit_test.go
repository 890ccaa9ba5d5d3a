package admit

import (
	"context"
	"testing"

	"github.com/omega-gateway/omega/domain/turn"
)

type approveAll struct{ PairingGate }

func (approveAll) Applies(*turn.MessageReceived) bool                            { return true }
func (approveAll) Approved(context.Context, *turn.MessageReceived) (bool, error) { return true, nil }

func TestDecide(t *testing.T) {
	a := Auth{Allowed: map[string][]string{"telegram": {"42"}}}
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		m       turn.MessageReceived
		pairing PairingGate
		want    bool
	}{
		{"owner channel", turn.MessageReceived{Channel: "terminal", Trusted: true}, nil, true},
		{"allowlisted", turn.MessageReceived{Channel: "telegram", SenderID: "42"}, nil, true},
		{"stranger", turn.MessageReceived{Channel: "telegram", SenderID: "7"}, nil, false},
		{"no allowlist", turn.MessageReceived{Channel: "whatsapp", SenderID: "7"}, nil, false},
		{"paired stranger", turn.MessageReceived{Channel: "telegram", SenderID: "7"}, approveAll{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, reason, err := Decide(ctx, a, tc.pairing, &tc.m)
			if err != nil || ok != tc.want || reason == "" {
				t.Fatalf("Decide = %v, %q, %v; want %v with a reason", ok, reason, err, tc.want)
			}
		})
	}
}
