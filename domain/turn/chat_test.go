package turn

import (
	"testing"

	"github.com/omega-gateway/omega/domain/sender"
)

func TestSenderRefNamesKeyAndStream(t *testing.T) {
	m := MessageReceived{Channel: "telegram", SenderID: "42"}
	s := m.Sender()
	if s.Key() != "telegram-42" || s.Stream() != "sender-telegram-42" {
		t.Fatalf("key %q stream %q", s.Key(), s.Stream())
	}
	if sender.SenderStream("telegram", "42") != s.Stream() {
		t.Fatalf("SenderStream disagrees with SenderRef.Stream")
	}
}

func TestMessageChat(t *testing.T) {
	tests := []struct {
		name string
		m    MessageReceived
		want sender.SenderRef
	}{
		{"private", MessageReceived{Channel: "telegram", SenderID: "42", ChatID: "42"}, sender.SenderRef{Channel: "telegram", ID: "42"}},
		{"group", MessageReceived{Channel: "telegram", SenderID: "42", ChatID: "-100555", IsGroup: true}, sender.SenderRef{Channel: "telegram", ID: "group:-100555"}},
		{"group without chat", MessageReceived{Channel: "whatsapp", SenderID: "49151", IsGroup: true}, sender.SenderRef{Channel: "whatsapp", ID: "49151"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.m.Chat()
			if got != tt.want || got.IsGroup() != (tt.name == "group") {
				t.Fatalf("Chat() = %+v (group %v), want %+v", got, got.IsGroup(), tt.want)
			}
		})
	}
	if k := sender.GroupRef("telegram", "-100555").Key(); k != "telegram-group:-100555" {
		t.Fatalf("group key %q", k)
	}
}
