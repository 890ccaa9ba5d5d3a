package turn

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/sender"
)

func fold(ps ...domain.Payload) *Turn {
	t := &Turn{ID: "t"}
	for i, p := range ps {
		t.Apply(p, int64(i+1), time.Time{})
	}
	return t
}

func TestTurnNext(t *testing.T) {
	msg := MessageReceived{Channel: "http", SenderID: "1", Text: "hi"}
	group := MessageReceived{Channel: "telegram", SenderID: "1", Text: "hi", IsGroup: true}
	withFile := MessageReceived{Channel: "http", SenderID: "1", Text: "hi", Attachments: []AttachmentRef{{Name: "a.jpg", Path: "/x/a.jpg"}}}
	welcomed := TurnEnv{SenderWelcomed: true}
	cases := []struct {
		name   string
		events []domain.Payload
		env    TurnEnv
		want   Step
		status string
	}{
		{"empty stream", nil, welcomed, StepNone, ""},
		{"new message", []domain.Payload{msg}, welcomed, StepAuthorize, ""},
		{"denied, answer it", []domain.Payload{msg, AccessDenied{}}, welcomed, StepSendReply, StatusDenied},
		{"denied and answered", []domain.Payload{msg, AccessDenied{}, ReplySent{Kind: "deny"}}, welcomed, StepComplete, StatusDenied},
		{"first contact", []domain.Payload{msg, AccessGranted{}}, TurnEnv{}, StepWelcome, ""},
		{"no welcome in groups", []domain.Payload{group, AccessGranted{}}, TurnEnv{}, StepBuildContext, ""},
		{"welcomed by this turn", []domain.Payload{msg, AccessGranted{}, WelcomeSent{}}, TurnEnv{}, StepBuildContext, ""},
		{"command", []domain.Payload{msg, AccessGranted{}}, TurnEnv{SenderWelcomed: true, IsCommand: true}, StepCommand, ""},
		{"command answered", []domain.Payload{msg, AccessGranted{}, CommandAnswered{Reply: "x"}}, TurnEnv{SenderWelcomed: true, IsCommand: true}, StepSendReply, StatusCommand},
		{"build context", []domain.Payload{msg, AccessGranted{}}, welcomed, StepBuildContext, ""},
		{"call provider", []domain.Payload{msg, AccessGranted{}, ContextBuilt{}}, welcomed, StepCallProvider, ""},
		{"crash after intent: call again", []domain.Payload{msg, AccessGranted{}, ContextBuilt{}, ProviderCalled{}}, welcomed, StepCallProvider, ""},
		{"resume failed: full context", []domain.Payload{msg, AccessGranted{}, ContextBuilt{}, ProviderFailed{RetryFullContext: true}}, welcomed, StepCallProvider, ""},
		{"provider failed: tell the user", []domain.Payload{msg, AccessGranted{}, ContextBuilt{}, ProviderFailed{}}, welcomed, StepSendReply, StatusError},
		{"reply recorded: never call again", []domain.Payload{msg, AccessGranted{}, ContextBuilt{}, ProviderReplied{Text: "x"}}, welcomed, StepProcessReply, ""},
		{"ready to send", []domain.Payload{msg, AccessGranted{}, ContextBuilt{}, ProviderReplied{}, ReplyReady{}}, welcomed, StepSendReply, StatusOK},
		{"suppressed", []domain.Payload{group, AccessGranted{}, ContextBuilt{}, ProviderReplied{}, TurnSuppressed{}}, welcomed, StepComplete, StatusSuppressed},
		{"sent", []domain.Payload{msg, AccessGranted{}, ContextBuilt{}, ProviderReplied{}, ReplyReady{}, ReplySent{}}, welcomed, StepComplete, StatusOK},
		{"undelivered", []domain.Payload{msg, AccessGranted{}, ContextBuilt{}, ProviderReplied{}, ReplyReady{}, ReplyFailed{}}, welcomed, StepComplete, StatusUndelivered},
		{"attachments to clean", []domain.Payload{withFile, AccessGranted{}, ContextBuilt{}, ProviderReplied{}, ReplyReady{}, ReplySent{}}, welcomed, StepCleanup, StatusOK},
		{"cleaned", []domain.Payload{withFile, AccessGranted{}, ContextBuilt{}, ProviderReplied{}, ReplyReady{}, ReplySent{}, AttachmentsRemoved{}}, welcomed, StepComplete, StatusOK},
		{"completed", []domain.Payload{msg, AccessDenied{}, ReplySent{}, TurnCompleted{}}, welcomed, StepNone, StatusDenied},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			turn := fold(c.events...)
			if got := turn.Next(c.env); got != c.want {
				t.Fatalf("Next = %s, want %s", got, c.want)
			}
			if c.status != "" && turn.Outcome() != c.status {
				t.Fatalf("Outcome = %s, want %s", turn.Outcome(), c.status)
			}
		})
	}
}

func TestSenderDecisions(t *testing.T) {
	var p sender.SenderProfile
	apply := func(ps []domain.Payload) {
		for _, e := range ps {
			p.Apply(e, p.Version+1, time.Now())
		}
	}
	evs, err := p.RecordFact(" Favourite Colour ", " blue ", "user")
	if err != nil || len(evs) != 1 || evs[0].(sender.FactRecorded).Key != "favourite_colour" {
		t.Fatalf("RecordFact = %v, %v", evs, err)
	}
	apply(evs)
	if evs, _ := p.RecordFact("favourite colour", "blue", "user"); len(evs) != 0 {
		t.Fatalf("same fact recorded again: %v", evs)
	}
	for _, bad := range [][2]string{{"", "x"}, {"123", "x"}, {"k", ""}, {"k", "$5"}, {"k", "a|b|c"}, {"k", "12.50"}, {string(make([]byte, 51)), "x"}} {
		if _, err := p.RecordFact(bad[0], bad[1], ""); err == nil {
			t.Errorf("RecordFact(%q, %q) accepted", bad[0], bad[1])
		}
	}
	apply(p.Welcome("Ana", "Spanish", "t1"))
	if !p.Welcomed || p.Language != "Spanish" || p.WelcomedTurn != "t1" || len(p.Welcome("Ana", "English", "t2")) != 0 {
		t.Fatalf("welcome: %+v", p)
	}
	apply(p.SwitchLanguage("French"))
	if p.Language != "French" || len(p.SwitchLanguage("french")) != 0 {
		t.Fatalf("language: %+v", p)
	}
	apply(p.StartSession("", "s1", "claude-code"))
	apply(p.StartSession("proj", "s2", "claude-code"))
	if p.Sessions[""] != "s1" || p.Sessions["proj"] != "s2" || len(p.StartSession("", "s1", "x")) != 0 {
		t.Fatalf("sessions: %+v", p.Sessions)
	}
	apply(p.ClearSession("", "forget"))
	if _, ok := p.Sessions[""]; ok || len(p.ClearSession("", "again")) != 0 {
		t.Fatalf("cleared: %+v", p.Sessions)
	}
	apply(p.PurgeFacts())
	if len(p.Facts) != 0 {
		t.Fatalf("purge left %v", p.Facts)
	}
	apply(p.SetPersonality("pirate"))
	apply(p.SetPersonality("reset"))
	if p.Personality != "" {
		t.Fatalf("personality = %q", p.Personality)
	}
}

func TestRegistryUpcast(t *testing.T) {
	r := domain.NewRegistry()
	sender.RegisterEvents(r)
	r.Register(sender.FactRecorded{}, 2)
	if err := r.RegisterUpcaster("FactRecorded", 1, func(d json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"key":"legacy","value":"v"}`), nil
	}); err != nil {
		t.Fatal(err)
	}
	p, err := r.Decode(domain.Event{Type: "FactRecorded", Data: []byte(`{"k":"old"}`)})
	if err != nil || p.(sender.FactRecorded).Key != "legacy" {
		t.Fatalf("upcast = %v, %v", p, err)
	}
	if _, err := r.Decode(domain.Event{Type: "Nope", Position: 9, Data: []byte(`{}`)}); err == nil {
		t.Fatal("unknown type decoded")
	}
}

// A store writes no version for a type that never changed shape; an
// event without one reads as version 1.
func TestRegistryStamps(t *testing.T) {
	r := domain.NewRegistry()
	sender.RegisterEvents(r)
	r.Register(sender.FactRecorded{}, 2)
	stamps := r.Stamps()
	for typ, want := range map[string]int{"FactRecorded": 2, "Welcomed": 0, "Unknown": 0} {
		if got := stamps.SchemaVersion(typ); got != want {
			t.Errorf("%s stamped %d, want %d", typ, got, want)
		}
	}
	p, err := r.Decode(domain.Event{Type: "Welcomed", Data: []byte(`{"name":"Ana"}`)})
	if err != nil || p.(sender.Welcomed).Name != "Ana" {
		t.Fatalf("unstamped event decodes as %+v, %v", p, err)
	}
}

// A turn's events name their turn by their stream; other events by their
// metadata.
func TestEventCorrelation(t *testing.T) {
	cases := []struct {
		name string
		e    domain.Event
		want string
	}{
		{"turn event without one", domain.Event{StreamID: domain.TurnStream("t1")}, "t1"},
		{"turn event recorded with one", domain.Event{StreamID: domain.TurnStream("t1"), Metadata: domain.Metadata{CorrelationID: "t1"}}, "t1"},
		{"sender event", domain.Event{StreamID: "sender-telegram-42", Metadata: domain.Metadata{CorrelationID: "t2"}}, "t2"},
		{"neither", domain.Event{StreamID: "heartbeat-all"}, ""},
	}
	for _, c := range cases {
		if got := c.e.Correlation(); got != c.want {
			t.Errorf("%s: correlation %q, want %q", c.name, got, c.want)
		}
	}
}

func TestTurnPlan(t *testing.T) {
	msg := MessageReceived{Channel: "http", SenderID: "1", Text: "build it"}
	withFile := MessageReceived{Channel: "http", SenderID: "1", Text: "build it", Attachments: []AttachmentRef{{Name: "a.jpg", Path: "/x/a.jpg"}}}
	classify := TurnEnv{SenderWelcomed: true, Classify: true}
	off := TurnEnv{SenderWelcomed: true}
	plan := RouteDecided{Steps: []string{"one", "two", "three"}, Model: "complex"}
	direct := RouteDecided{Direct: true, Model: "fast"}
	open := []domain.Payload{msg, AccessGranted{}, ContextBuilt{}}
	with := func(ps ...domain.Payload) []domain.Payload {
		return append(append([]domain.Payload(nil), open...), ps...)
	}
	done := func(i int) PlanStepCompleted { return PlanStepCompleted{Index: i, Reply: "r"} }
	progress := func(i int) PlanProgressSent { return PlanProgressSent{Index: i, Reply: "r"} }
	failed := func(i, attempt int) PlanStepFailed {
		return PlanStepFailed{Index: i, Attempt: attempt, Class: "server"}
	}
	cases := []struct {
		name    string
		events  []domain.Payload
		env     TurnEnv
		want    Step
		status  string
		attempt int // NextAttempt, when set
	}{
		{"classify after the context", with(), classify, StepClassify, "", 0},
		{"classification off", with(), off, StepCallProvider, "", 0},
		{"called before classification was on", with(ProviderCalled{}), classify, StepCallProvider, "", 0},
		{"direct: one call", with(direct), classify, StepCallProvider, "", 0},
		{"direct: reply processed as usual", with(direct, ProviderReplied{}), classify, StepProcessReply, "", 0},
		{"direct: failed", with(direct, ProviderFailed{}), classify, StepSendReply, StatusError, 0},
		{"a decided route holds without the setting", with(plan), off, StepPlanProgress, "", 0},
		{"a plan is announced first", with(plan), classify, StepPlanProgress, "", 0},
		{"announced: run step 1", with(plan, progress(0)), classify, StepPlanStep, "", 1},
		{"step 1 done: report it", with(plan, progress(0), done(1)), classify, StepPlanProgress, "", 0},
		{"step 1 reported: run step 2", with(plan, progress(0), done(1), progress(1)), classify, StepPlanStep, "", 1},
		{"step 2 failed once: retry", with(plan, progress(0), done(1), progress(1), failed(2, 1)), classify, StepPlanStep, "", 2},
		{"step 2 failed twice: retry", with(plan, progress(0), done(1), progress(1), failed(2, 1), failed(2, 2)), classify, StepPlanStep, "", 3},
		{"step 2 failed three times: stop", with(plan, progress(0), done(1), progress(1), failed(2, 1), failed(2, 2), failed(2, 3)), classify, StepPlanSummary, StatusError, 0},
		{"retry succeeded: failures forgotten", with(plan, progress(0), done(1), progress(1), failed(2, 1), failed(2, 2), done(2), progress(2)), classify, StepPlanStep, "", 1},
		{"a duplicate step record is ignored", with(plan, progress(0), done(1), done(1), progress(1)), classify, StepPlanStep, "", 1},
		{"a stale failure is ignored", with(plan, progress(0), done(1), progress(1), failed(1, 3)), classify, StepPlanStep, "", 1},
		{"all steps done: summarise", with(plan, progress(0), done(1), progress(1), done(2), progress(2), done(3), progress(3)), classify, StepPlanSummary, StatusOK, 0},
		{"last step done: report it first", with(plan, progress(0), done(1), progress(1), done(2), progress(2), done(3)), classify, StepPlanProgress, "", 0},
		{"summary ready: send", with(plan, progress(0), done(1), progress(1), done(2), progress(2), done(3), progress(3), ReplyReady{}), classify, StepSendReply, StatusOK, 0},
		{"stopped plan: send the error", with(plan, progress(0), failed(1, 1), failed(1, 2), failed(1, 3), ReplyReady{}), classify, StepSendReply, StatusError, 0},
		{"sent: complete", with(plan, progress(0), done(1), progress(1), done(2), progress(2), done(3), progress(3), ReplyReady{}, ReplySent{}), classify, StepComplete, StatusOK, 0},
		{"plan with attachments: clean up", []domain.Payload{withFile, AccessGranted{}, ContextBuilt{}, plan, progress(0), done(1), progress(1), done(2), progress(2), done(3), progress(3), ReplyReady{}, ReplySent{}}, classify, StepCleanup, StatusOK, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			turn := fold(c.events...)
			if got := turn.Next(c.env); got != c.want {
				t.Fatalf("Next = %s, want %s", got, c.want)
			}
			if c.status != "" && turn.Outcome() != c.status {
				t.Fatalf("Outcome = %s, want %s", turn.Outcome(), c.status)
			}
			if c.attempt != 0 && turn.NextAttempt() != c.attempt {
				t.Fatalf("NextAttempt = %d, want %d", turn.NextAttempt(), c.attempt)
			}
		})
	}
}

func TestTurnPlanFold(t *testing.T) {
	turn := fold(MessageReceived{Text: "x"}, RouteDecided{Steps: []string{"a", "b"}},
		PlanProgressSent{Index: 0, Text: "announce"},
		PlanStepCompleted{Index: 1, Text: "a", Reply: "raw A MARKER"}, PlanProgressSent{Index: 1, Reply: "A"},
		PlanStepCompleted{Index: 2, Text: "b", Reply: "raw B"}, PlanProgressSent{Index: 2, Reply: "B"})
	if !turn.PlanComplete() || turn.NextStepIndex() != 3 || turn.Progressed != 3 {
		t.Fatalf("fold: %+v", turn)
	}
	if len(turn.StepReplies) != 2 || turn.StepReplies[0] != "A" || turn.StepReplies[1] != "B" {
		t.Fatalf("step replies = %q", turn.StepReplies)
	}
	if turn.ReplyKind() != "reply" {
		t.Fatalf("ReplyKind = %s", turn.ReplyKind())
	}
	stopped := fold(MessageReceived{Text: "x"}, RouteDecided{Steps: []string{"a", "b"}}, PlanStepFailed{Index: 1, Attempt: 3})
	if !stopped.PlanStopped() || stopped.ReplyKind() != "error" || stopped.PlanComplete() {
		t.Fatalf("stopped: %+v", stopped)
	}
}
