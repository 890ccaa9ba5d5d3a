package export

import (
	"testing"
	"time"
)

func TestTranscriptPlacesCommandsAndNoticesInTheirConversation(t *testing.T) {
	at := func(s int) time.Time { return time.Date(2026, 1, 1, 12, 0, s, 0, time.UTC) }
	turns := []Message{
		{At: at(1), Role: RoleUser, Text: "/help"}, // before any conversation
		{At: at(2), Role: RoleUser, Text: "hi", ConversationID: "c1"},
		{At: at(3), Role: RoleUser, Text: "/status"},
		{At: at(5), Role: RoleUser, Text: "again", ConversationID: "c1"},
		{At: at(8), Role: RoleUser, Text: "next day", ConversationID: "c2"},
	}
	notices := []Message{
		{At: at(4), Role: RoleAssistant, Kind: KindReminder, Text: "Reminder"},
		{At: at(9), Role: RoleAssistant, Kind: KindHeartbeatAlert, Text: "Alert"},
	}
	got := Transcript(turns, notices, "")
	want := []struct{ text, conv string }{
		{"/help", "c1"}, {"hi", "c1"}, {"/status", "c1"}, {"Reminder", "c1"}, {"again", "c1"}, {"next day", "c2"}, {"Alert", "c2"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d messages: %+v", len(got), got)
	}
	for i, w := range want {
		if got[i].Text != w.text || got[i].ConversationID != w.conv {
			t.Errorf("message %d = %q in %q, want %q in %q", i, got[i].Text, got[i].ConversationID, w.text, w.conv)
		}
	}
	if only := Transcript(turns, notices, "c2"); len(only) != 2 {
		t.Errorf("conversation c2 has %d messages, want 2", len(only))
	}
}
