package app_test

import (
	"strings"
	"testing"

	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/summary"
)

// A FACTS reply that offers a secret, a malformed key and marker names as
// keys has them refused: none reaches the sender's profile or the next
// prompt, each refusal is recorded with its reason, and the record holds
// no secret.
func TestFactsRefuseSecretsAndMalformedKeys(t *testing.T) {
	const secret = "sk-proj-4f9aQ2xL7mN3bV8cZ1kR6tY0wE5uI"
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			p := &summaryProvider{
				summary: func() (string, error) { return "Ana set up her tools.", nil },
				facts:   "name: Ana\napi_key: " + secret + "\nbad_key!: yes\nPURGE_FACTS: now\nschedule: daily",
			}
			vars := baseVars(t, b, "")
			vars["OMEGA_CONVERSATION_IDLE"] = "1s"
			n := startSummaryNode(t, vars, p)
			first := say(t, n, "ana", "hello, I am Ana", "20s")
			stream := summary.SummaryStream(contextOf(t, n, first.TurnID).ConversationID)
			waitFor(t, "the conversation closed", func() bool {
				return countType(streamEvents(t, n, stream), "ConversationClosed") == 1
			})
			evs := streamEvents(t, n, stream)
			facts := decodeLast[summary.FactsExtracted](t, evs, "FactsExtracted")
			if len(facts.Accepted) != 1 || facts.Accepted[0].Key != "name" || len(facts.Rejected) != 4 {
				t.Fatalf("facts accepted %v rejected %v", facts.Accepted, facts.Rejected)
			}
			reasons := map[string]string{}
			for _, r := range facts.Rejected {
				k, _, _ := strings.Cut(r.Line, ":")
				reasons[k] = r.Reason
			}
			for key, want := range map[string]string{"api_key": "looks like a secret", "bad_key!": "only letters, digits", "PURGE_FACTS": "marker name", "schedule": "marker name"} {
				if !strings.Contains(reasons[key], want) {
					t.Errorf("refusal of %s: %q, want it to say %q (all: %v)", key, reasons[key], want, reasons)
				}
			}
			for _, e := range append(evs, streamEvents(t, n, sender.SenderStream("http", "ana"))...) {
				if strings.Contains(string(e.Data), secret) {
					t.Fatalf("%s records the secret: %s", e.Type, e.Data)
				}
			}
			say(t, n, "ana", "what do you know about me?", "20s")
			req := p.lastTurn()
			if prompt := req.System + req.Prompt; strings.Contains(prompt, secret) || strings.Contains(prompt, "bad_key") {
				t.Fatalf("the next prompt carries a refused fact:\n%s", prompt)
			}
		})
	}
}
