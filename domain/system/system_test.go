package system_test

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/system"
)

// Stream names are in the log: a renamed stream hides what was recorded
// under the old name.
func TestStreamNames(t *testing.T) {
	cases := []struct{ got, want string }{
		{system.PoisonStream("intake"), "poison-intake"},
		{system.ProjectionPoisonStream, "poison-projections"},
		{system.CommandStream("c1"), "command-c1"},
		{system.WebhookStream("w1"), "webhook-w1"},
		{system.ChannelStream("telegram"), "channel-telegram"},
		{system.DecisionInputsStream("0123abcd"), "inputs-0123abcd"},
		{system.WhatsAppPairingStream, "whatsapp-pairing"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("stream %q, want %q", c.got, c.want)
		}
	}
	for stream, want := range map[string]bool{
		system.DecisionInputsStream(system.DecisionInputs{}.Hash()): true,
		"inputs-":       true,
		"turn-inputs-1": false,
		"input-1":       false,
	} {
		if got := system.IsDecisionInputsStream(stream); got != want {
			t.Errorf("IsDecisionInputsStream(%q) = %v, want %v", stream, got, want)
		}
	}
}

// Each event's type name and JSON are what the log holds: a payload
// written today reads back equal, and one written as below still decodes.
func TestEventsReadBackFromTheirRecordedForm(t *testing.T) {
	cases := []struct {
		p    domain.Payload
		json string
	}{
		{system.MessagePoisoned{Handler: "h", Topic: "t", Reason: "r", MessageID: "m", Name: "N", Payload: "{}", Metadata: map[string]string{"k": "v"}},
			`{"handler":"h","topic":"t","reason":"r","message_id":"m","name":"N","payload":"{}","metadata":{"k":"v"}}`},
		{system.WebhookDelivered{Channel: "telegram", ChatID: "1", Text: "hi", Chunks: 2, Error: "e"},
			`{"channel":"telegram","chat_id":"1","text":"hi","chunks":2,"error":"e"}`},
		{system.ProjectionEventPoisoned{Projection: "p", Position: 7, StreamID: "s", Type: "T", EventID: "id", Error: "e"},
			`{"projection":"p","position":7,"stream_id":"s","event_type":"T","event_id":"id","error":"e"}`},
		{system.CommandHandled{CommandID: "c", Name: "N"}, `{"command_id":"c","name":"N"}`},
		{system.CommandFailed{CommandID: "c", Name: "N", Error: "e"}, `{"command_id":"c","name":"N","error":"e"}`},
		{system.ChannelDown{Channel: "telegram", Error: "e", FailedPolls: 3}, `{"channel":"telegram","error":"e","failed_polls":3}`},
		{system.ChannelStalled{Channel: "telegram", Error: "e", FailedPolls: 1}, `{"channel":"telegram","error":"e","failed_polls":1}`},
		{system.ChannelRecovered{Channel: "telegram", FailedPolls: 3, DownMs: 900}, `{"channel":"telegram","failed_polls":3,"down_ms":900}`},
		{system.OwnerAlerted{Kind: system.AlertChannelDown, Text: "t", Channel: "telegram", Chat: "1", Error: "e"},
			`{"kind":"channel_down","text":"t","channel":"telegram","chat":"1","error":"e"}`},
		{system.WhatsAppPairingStarted{Session: "s", Channel: "telegram", ChatID: "1"}, `{"session":"s","channel":"telegram","chat_id":"1"}`},
		{system.WhatsAppQRSent{Session: "s", Index: 1, ValidForMs: 20000, Error: "e"}, `{"session":"s","index":1,"valid_for_ms":20000,"error":"e"}`},
		{system.WhatsAppPaired{Session: "s"}, `{"session":"s"}`},
		{system.WhatsAppPairingFailed{Session: "s", Reason: system.PairingTimeout, Error: "e"}, `{"session":"s","reason":"timeout","error":"e"}`},
		{system.DecisionInputs{Allowed: map[string][]string{"telegram": {"1"}}, PairingCodeTTL: time.Second, Timezone: "UTC"},
			`{"allowed":{"telegram":["1"]},"pairing":false,"pairing_code_ttl":1000000000,"pairing_max_codes":0,"timezone":"UTC","classify":false,"history_limit":0,"conversation_idle":0}`},
	}
	r := domain.NewRegistry()
	system.RegisterSystemEvents(r)
	system.RegisterWhatsAppEvents(r)
	system.RegisterInputsEvents(r)
	var names []string
	for _, c := range cases {
		names = append(names, c.p.EventType())
		ne, err := domain.NewEventFrom(c.p, domain.Metadata{})
		if err != nil {
			t.Fatal(err)
		}
		if string(ne.Data) != c.json {
			t.Errorf("%s is written as %s\nwant %s", ne.Type, ne.Data, c.json)
		}
		got, err := r.Decode(domain.Event{Type: ne.Type, Data: []byte(c.json)})
		if err != nil || !reflect.DeepEqual(got, c.p) {
			t.Errorf("%s reads back as %#v, %v", ne.Type, got, err)
		}
	}
	types := r.Types()
	slices.Sort(types)
	slices.Sort(names)
	if !slices.Equal(types, names) {
		t.Errorf("registered %v\nwant %v", types, names)
	}
}
