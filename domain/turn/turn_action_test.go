package turn

import (
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain"
)

// A scheduled action whose provider call fails is called again, up to
// three calls; a person's message is not.
func TestActionTurnRetriesFailedCalls(t *testing.T) {
	for _, c := range []struct {
		name  string
		task  bool
		calls int
		want  Step
	}{
		{"action after one failure", true, 1, StepCallProvider},
		{"action after two failures", true, 2, StepCallProvider},
		{"action after three failures reports", true, 3, StepSendReply},
		{"message after one failure reports", false, 1, StepSendReply},
	} {
		t.Run(c.name, func(t *testing.T) {
			var turn Turn
			m := MessageReceived{Channel: "telegram", SenderID: "1", ChatID: "1", Text: "x", ReceivedAt: time.Now()}
			if c.task {
				m.Task = &TaskOrigin{ID: "t1", Occurrence: 1, Description: "x"}
			}
			v := int64(0)
			apply := func(p domain.Payload) { v++; turn.Apply(p, v, time.Now()) }
			apply(m)
			apply(AccessGranted{})
			apply(ContextBuilt{Model: "m"})
			for range c.calls {
				apply(ProviderCalled{Attempt: 1})
				apply(ProviderFailed{Class: "server", Message: "boom"})
			}
			if got := turn.Next(TurnEnv{SenderWelcomed: true}); got != c.want {
				t.Fatalf("next = %s, want %s", got, c.want)
			}
		})
	}
}
