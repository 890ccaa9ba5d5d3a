package reports

import (
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/access"
	"github.com/omega-gateway/omega/domain/identity"
	"github.com/omega-gateway/omega/domain/learning"
	"github.com/omega-gateway/omega/domain/markers"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/task"
	"github.com/omega-gateway/omega/domain/turn"
)

var t0 = time.Date(2026, 2, 24, 17, 0, 0, 0, time.UTC)

// summarySamples covers every event the timeline explains, with the
// fields its summary branches on.
var summarySamples = []domain.Payload{
	turn.MessageReceived{Text: "hello\nthere", Attachments: []turn.AttachmentRef{{}}, IsGroup: true},
	turn.MessageReceived{Text: "plain"},
	turn.AccessGranted{Reason: "allowlisted"},
	turn.AccessDenied{Reason: "not allowlisted"},
	turn.WelcomeSent{Language: "es", Error: "blocked"},
	turn.AckSent{Text: "busy"},
	turn.CommandAnswered{Command: "/help", Reply: "commands"},
	turn.ContextBuilt{Model: "m", SectionsUsed: []string{"a", "b"}, System: "sys", Prompt: "prompt", ConversationID: "conversation-123456789",
		SessionID: "session-123456789", Project: "p", SanitizeWarnings: []string{"w1", "w2"}},
	turn.ContextBuilt{Model: "m", Prompt: "prompt", Continuation: true, System: "sys"},
	turn.ProviderCalled{Provider: "claude-code", Model: "m", Attempt: 2, SessionID: "s", FullContext: true},
	turn.ProviderReplied{Provider: "p", Model: "m", DurationMs: 1500, ReplyBytes: 10, InputTokens: 3, OutputTokens: 4, SessionID: "sess", Text: "reply"},
	turn.ProviderFailed{Provider: "p", Class: "timeout", Message: "slow", RetryFullContext: true},
	turn.ReplyReady{Text: "ready"},
	turn.TurnSuppressed{Reason: "silent"},
	turn.ReplySent{Kind: "reply", Chunks: 2, PlainText: true},
	turn.ReplyFailed{Kind: "reply", Class: "blocked", Error: "403"},
	turn.AttachmentsRemoved{Paths: []string{"a", "b"}},
	turn.TurnCompleted{Status: "replied", DurationMs: 2500},
	turn.MarkersApplied{Step: 2, Markers: []markers.AppliedMarker{{Name: "SCHEDULE", Effect: "scheduled"}, {Name: "LESSON", Effect: "learned"}}},
	turn.MarkersApplied{Markers: []markers.AppliedMarker{{Name: "SILENT", Effect: "silent"}}},
	turn.ConversationClosed{ConversationID: "conversation-1"},
	turn.RouteDecided{Steps: []string{"one", "two"}, Model: "big"},
	turn.RouteDecided{Direct: true, Model: "fast"},
	turn.RouteDecided{Direct: true, Model: "fast", Error: "down"},
	turn.RouteDecided{Direct: true, Model: "fast", Prefilter: true},
	turn.PlanStepCompleted{Index: 1, Text: "step", Reply: "done"},
	turn.PlanStepFailed{Index: 2, Attempt: 3, Class: "server", Message: "boom"},
	turn.PlanProgressSent{Text: "plan announced"},
	turn.PlanProgressSent{Index: 2, Text: "progress", Error: "blocked"},
	task.TaskScheduled{Kind: "reminder", ID: "task-123456789", Due: t0, Repeat: "once", Description: "call"},
	task.TaskCancelled{ID: "task-123456789", Reason: "marker"},
	task.TaskUpdated{ID: "task-123456789", Description: "new"},
	sender.Welcomed{Language: "de"},
	sender.SessionStarted{Project: "p", SessionID: "session-123456789"},
	sender.SessionCleared{Project: "p", Reason: "forget"},
	sender.FactRecorded{Key: "name", Value: "Ana"},
	sender.LanguageSwitched{From: "en", To: "es"},
	learning.BugReported{Description: "bug"},
	access.PairingRequested{Code: "K7M2QX", Channel: "telegram", SenderID: "9", ExpiresAt: t0.Add(time.Hour)},
	access.PairingOwnerNotified{Code: "K7M2QX", Target: "telegram:42"},
	access.PairingApproved{Code: "K7M2QX", Channel: "telegram", SenderID: "9", By: "telegram:42"},
	access.PairingRejected{Code: "K7M2QX", Channel: "telegram", SenderID: "9", By: "cli"},
	access.PairingRevoked{Channel: "telegram", SenderID: "9", By: "cli"},
	identity.IdentityLinked{Canonical: "telegram:9", Alias: "whatsapp:1", By: "cli"},
	identity.IdentityUnlinked{Canonical: "telegram:9", Alias: "whatsapp:1", By: "cli"},
}

// wantSummaries are the lines `omega timeline` prints for summarySamples.
var wantSummaries = []string{
	"text=\"hello⏎there\" attachments=1 group",
	"text=\"plain\"",
	"allowlisted",
	"not allowlisted",
	"language=es (not delivered: blocked)",
	"\"busy\"",
	"/help -> \"commands\"",
	"model=m sections=[a b] history=0 facts=0 prompt=9B conversation=conversa resume=session- project=p warnings=w1; w2",
	"model=m sections=[] history=0 facts=0 prompt=6B conversation=",
	"claude-code model=m attempt=2 resume=s full-context",
	"p m in 1.5s, 10B, tokens 3/4, session=sess text=\"reply\"",
	"p class=timeout \"slow\" (retrying with full context)",
	"\"ready\"",
	"silent",
	"kind=reply chunks=2 plain=true",
	"kind=reply class=blocked \"403\"",
	"2 file(s)",
	"status=replied in 2.5s",
	"step 2: SCHEDULE: scheduled; LESSON: learned",
	"SILENT: silent",
	"conversation=conversa",
	"plan of 2 steps model=big: one | two",
	"direct model=fast",
	"direct model=fast (classification failed: \"down\")",
	"direct model=fast (pre-filter: no classification call)",
	"step 1 \"step\" -> \"done\"",
	"step 2 attempt 3 class=server \"boom\"",
	"announced \"plan announced\"",
	"step 2 \"progress\" (not delivered: blocked)",
	"reminder task-123 due=2026-02-24T17:00:00Z repeat=once \"call\"",
	"task-123 by marker",
	"task-123 \"new\"",
	"language=de",
	"project=\"p\" session=session-",
	"project=\"p\" forget",
	"name=\"Ana\"",
	"en -> es",
	"{\"description\":\"bug\"}",
	"code=K7M2QX sender=telegram:9 expires=2026-02-24T18:00:00Z",
	"code=K7M2QX target=telegram:42 ",
	"code=K7M2QX sender=telegram:9 by=telegram:42",
	"code=K7M2QX sender=telegram:9 by=cli",
	"sender=telegram:9 by=cli",
	"whatsapp:1 → telegram:9 by=cli",
	"whatsapp:1 ↛ telegram:9 by=cli",
}

func TestTimelineSummaries(t *testing.T) {
	if len(wantSummaries) != len(summarySamples) {
		t.Fatalf("%d samples, %d expectations", len(summarySamples), len(wantSummaries))
	}
	for i, p := range summarySamples {
		if got := describe(p); got != wantSummaries[i] {
			t.Errorf("%s:\n got %s\nwant %s", p.EventType(), got, wantSummaries[i])
		}
	}
}
