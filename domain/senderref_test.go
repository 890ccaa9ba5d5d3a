package domain

import "testing"

func TestSenderRefNamesKeyAndStream(t *testing.T) {
	m := MessageReceived{Channel: "telegram", SenderID: "42"}
	s := m.Sender()
	if s.Key() != "telegram-42" || s.Stream() != "sender-telegram-42" {
		t.Fatalf("key %q stream %q", s.Key(), s.Stream())
	}
	if SenderStream("telegram", "42") != s.Stream() {
		t.Fatalf("SenderStream disagrees with SenderRef.Stream")
	}
}
