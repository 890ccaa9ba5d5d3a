package domain

import (
	"encoding/json"
	"testing"
	"time"
)

func fold(ps ...Payload) *Turn {
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
		events []Payload
		env    TurnEnv
		want   Step
		status string
	}{
		{"empty stream", nil, welcomed, StepNone, ""},
		{"new message", []Payload{msg}, welcomed, StepAuthorize, ""},
		{"denied, answer it", []Payload{msg, AccessDenied{}}, welcomed, StepSendReply, StatusDenied},
		{"denied and answered", []Payload{msg, AccessDenied{}, ReplySent{Kind: "deny"}}, welcomed, StepComplete, StatusDenied},
		{"first contact", []Payload{msg, AccessGranted{}}, TurnEnv{}, StepWelcome, ""},
		{"no welcome in groups", []Payload{group, AccessGranted{}}, TurnEnv{}, StepBuildContext, ""},
		{"welcomed by this turn", []Payload{msg, AccessGranted{}, WelcomeSent{}}, TurnEnv{}, StepBuildContext, ""},
		{"command", []Payload{msg, AccessGranted{}}, TurnEnv{SenderWelcomed: true, IsCommand: true}, StepCommand, ""},
		{"command answered", []Payload{msg, AccessGranted{}, CommandAnswered{Reply: "x"}}, TurnEnv{SenderWelcomed: true, IsCommand: true}, StepSendReply, StatusCommand},
		{"build context", []Payload{msg, AccessGranted{}}, welcomed, StepBuildContext, ""},
		{"call provider", []Payload{msg, AccessGranted{}, ContextBuilt{}}, welcomed, StepCallProvider, ""},
		{"crash after intent: call again", []Payload{msg, AccessGranted{}, ContextBuilt{}, ProviderCalled{}}, welcomed, StepCallProvider, ""},
		{"resume failed: full context", []Payload{msg, AccessGranted{}, ContextBuilt{}, ProviderFailed{RetryFullContext: true}}, welcomed, StepCallProvider, ""},
		{"provider failed: tell the user", []Payload{msg, AccessGranted{}, ContextBuilt{}, ProviderFailed{}}, welcomed, StepSendReply, StatusError},
		{"reply recorded: never call again", []Payload{msg, AccessGranted{}, ContextBuilt{}, ProviderReplied{Text: "x"}}, welcomed, StepProcessReply, ""},
		{"ready to send", []Payload{msg, AccessGranted{}, ContextBuilt{}, ProviderReplied{}, ReplyReady{}}, welcomed, StepSendReply, StatusOK},
		{"suppressed", []Payload{group, AccessGranted{}, ContextBuilt{}, ProviderReplied{}, TurnSuppressed{}}, welcomed, StepComplete, StatusSuppressed},
		{"sent", []Payload{msg, AccessGranted{}, ContextBuilt{}, ProviderReplied{}, ReplyReady{}, ReplySent{}}, welcomed, StepComplete, StatusOK},
		{"undelivered", []Payload{msg, AccessGranted{}, ContextBuilt{}, ProviderReplied{}, ReplyReady{}, ReplyFailed{}}, welcomed, StepComplete, StatusUndelivered},
		{"attachments to clean", []Payload{withFile, AccessGranted{}, ContextBuilt{}, ProviderReplied{}, ReplyReady{}, ReplySent{}}, welcomed, StepCleanup, StatusOK},
		{"cleaned", []Payload{withFile, AccessGranted{}, ContextBuilt{}, ProviderReplied{}, ReplyReady{}, ReplySent{}, AttachmentsRemoved{}}, welcomed, StepComplete, StatusOK},
		{"completed", []Payload{msg, AccessDenied{}, ReplySent{}, TurnCompleted{}}, welcomed, StepNone, StatusDenied},
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
	var p SenderProfile
	apply := func(ps []Payload) {
		for _, e := range ps {
			p.Apply(e, p.Version+1, time.Now())
		}
	}
	evs, err := p.RecordFact(" Favourite Colour ", " blue ", "user")
	if err != nil || len(evs) != 1 || evs[0].(FactRecorded).Key != "favourite_colour" {
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
	r := NewRegistry()
	RegisterSenderEvents(r)
	r.Register(FactRecorded{}, 2)
	if err := r.RegisterUpcaster("FactRecorded", 1, func(d json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"key":"legacy","value":"v"}`), nil
	}); err != nil {
		t.Fatal(err)
	}
	p, err := r.Decode(Event{Type: "FactRecorded", Data: []byte(`{"k":"old"}`)})
	if err != nil || p.(FactRecorded).Key != "legacy" {
		t.Fatalf("upcast = %v, %v", p, err)
	}
	if _, err := r.Decode(Event{Type: "Nope", Position: 9, Data: []byte(`{}`)}); err == nil {
		t.Fatal("unknown type decoded")
	}
}
