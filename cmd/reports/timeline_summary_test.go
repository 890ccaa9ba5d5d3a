package reports

import (
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain"
)

var t0 = time.Date(2026, 2, 24, 17, 0, 0, 0, time.UTC)

// summarySamples covers every event the timeline explains, with the
// fields its summary branches on.
var summarySamples = []domain.Payload{
	domain.MessageReceived{Text: "hello\nthere", Attachments: []domain.AttachmentRef{{}}, IsGroup: true},
	domain.MessageReceived{Text: "plain"},
	domain.AccessGranted{Reason: "allowlisted"},
	domain.AccessDenied{Reason: "not allowlisted"},
	domain.WelcomeSent{Language: "es", Error: "blocked"},
	domain.AckSent{Text: "busy"},
	domain.CommandAnswered{Command: "/help", Reply: "commands"},
	domain.ContextBuilt{Model: "m", SectionsUsed: []string{"a", "b"}, System: "sys", Prompt: "prompt", ConversationID: "conversation-123456789",
		SessionID: "session-123456789", Project: "p", SanitizeWarnings: []string{"w1", "w2"}},
	domain.ContextBuilt{Model: "m", Prompt: "prompt", Continuation: true, System: "sys"},
	domain.ProviderCalled{Provider: "claude-code", Model: "m", Attempt: 2, SessionID: "s", FullContext: true},
	domain.ProviderReplied{Provider: "p", Model: "m", DurationMs: 1500, ReplyBytes: 10, InputTokens: 3, OutputTokens: 4, SessionID: "sess", Text: "reply"},
	domain.ProviderFailed{Provider: "p", Class: "timeout", Message: "slow", RetryFullContext: true},
	domain.ReplyReady{Text: "ready"},
	domain.TurnSuppressed{Reason: "silent"},
	domain.ReplySent{Kind: "reply", Chunks: 2, PlainText: true},
	domain.ReplyFailed{Kind: "reply", Class: "blocked", Error: "403"},
	domain.AttachmentsRemoved{Paths: []string{"a", "b"}},
	domain.TurnCompleted{Status: "replied", DurationMs: 2500},
	domain.MarkersApplied{Step: 2, Markers: []domain.AppliedMarker{{Name: "SCHEDULE", Effect: "scheduled"}, {Name: "LESSON", Effect: "learned"}}},
	domain.MarkersApplied{Markers: []domain.AppliedMarker{{Name: "SILENT", Effect: "silent"}}},
	domain.ConversationClosed{ConversationID: "conversation-1"},
	domain.RouteDecided{Steps: []string{"one", "two"}, Model: "big"},
	domain.RouteDecided{Direct: true, Model: "fast"},
	domain.RouteDecided{Direct: true, Model: "fast", Error: "down"},
	domain.RouteDecided{Direct: true, Model: "fast", Prefilter: true},
	domain.PlanStepCompleted{Index: 1, Text: "step", Reply: "done"},
	domain.PlanStepFailed{Index: 2, Attempt: 3, Class: "server", Message: "boom"},
	domain.PlanProgressSent{Text: "plan announced"},
	domain.PlanProgressSent{Index: 2, Text: "progress", Error: "blocked"},
	domain.TaskScheduled{Kind: "reminder", ID: "task-123456789", Due: t0, Repeat: "once", Description: "call"},
	domain.TaskCancelled{ID: "task-123456789", Reason: "marker"},
	domain.TaskUpdated{ID: "task-123456789", Description: "new"},
	domain.Welcomed{Language: "de"},
	domain.SessionStarted{Project: "p", SessionID: "session-123456789"},
	domain.SessionCleared{Project: "p", Reason: "forget"},
	domain.FactRecorded{Key: "name", Value: "Ana"},
	domain.LanguageSwitched{From: "en", To: "es"},
	domain.BugReported{Description: "bug"},
	domain.PairingRequested{Code: "K7M2QX", Channel: "telegram", SenderID: "9", ExpiresAt: t0.Add(time.Hour)},
	domain.PairingOwnerNotified{Code: "K7M2QX", Target: "telegram:42"},
	domain.PairingApproved{Code: "K7M2QX", Channel: "telegram", SenderID: "9", By: "telegram:42"},
	domain.PairingRejected{Code: "K7M2QX", Channel: "telegram", SenderID: "9", By: "cli"},
	domain.PairingRevoked{Channel: "telegram", SenderID: "9", By: "cli"},
	domain.IdentityLinked{Canonical: "telegram:9", Alias: "whatsapp:1", By: "cli"},
	domain.IdentityUnlinked{Canonical: "telegram:9", Alias: "whatsapp:1", By: "cli"},
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
