package pipeline_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/providers"
)

// A turn that stopped after recording its context by reference (a crash
// before the provider call) resumes with exactly the recorded prompt:
// the system prompt, the message and the history, resolved from the log.
func TestResumedTurnGivesTheProviderTheRecordedPrompt(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	earlier := f.turn(t, message("earlier question ¿sí?"))

	identity := strings.Repeat("You are omega — 你好 — and you keep promises. ", 8)
	full := turn.ContextBuilt{ConversationID: earlier, Language: "Spanish", Model: "fast", Message: "and now?", Prompt: "and now?",
		System:       identity + "\n\nResponde en español.",
		SystemPieces: []turn.TextPiece{{Text: identity, Stable: true}, {Text: "\n\n"}, {Text: "Responde en español."}},
		History: []turn.HistoryMessage{{Role: "user", Turn: earlier, Text: "earlier question ¿sí?"},
			{Role: "assistant", Turn: earlier, Text: "hola"}}}
	ref, err := f.driver.PromptTexts.Record(ctx, full, "and now?", domain.Metadata{})
	if err != nil {
		t.Fatal(err)
	}
	if ref.System != "" || ref.Message != "" || len(ref.HistoryTurns) != 1 || ref.History != nil {
		t.Fatalf("not recorded by reference: %+v", ref)
	}
	f.turn(t, message("and now?"), turn.AccessGranted{Reason: "owner"}, ref)

	reqs := f.provider.requests()
	req := reqs[len(reqs)-1]
	want := []providers.Message{{Role: "user", Content: "earlier question ¿sí?"}, {Role: "assistant", Content: "hola"}}
	if req.System != full.System || req.Prompt != "and now?" || !reflect.DeepEqual(req.History, want) {
		t.Fatalf("the resumed call got system %q, prompt %q, history %+v", req.System, req.Prompt, req.History)
	}
}
