package asof

import (
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
)

func TestParseTime(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	want := time.Date(2026, 11, 20, 14, 0, 0, 0, ny)
	for _, in := range []string{"2026-11-20 14:00", "2026-11-20T14:00", "2026-11-20 14:00:00", " 2026-11-20T14:00:00 ", "2026-11-20T19:00:00Z", "2026-11-20T14:00:00-05:00"} {
		got, ok := ParseTime(in, ny)
		if !ok || !got.Equal(want) {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "yesterday", "2026-11-20", "0123e4567-turn"} {
		if _, ok := ParseTime(in, ny); ok {
			t.Errorf("ParseTime(%q) read a time", in)
		}
	}
}

func TestMomentKeep(t *testing.T) {
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		m      Moment
		offset time.Duration
		keep   bool
	}{
		{Moment{At: at}, 0, true},
		{Moment{At: at}, time.Microsecond, false},
		{Moment{At: at, Before: true}, 0, false},
		{Moment{At: at, Before: true}, -time.Microsecond, true},
	} {
		if got := tt.m.Keep(domain.Event{RecordedAt: at.Add(tt.offset)}); got != tt.keep {
			t.Errorf("%+v keeps an event at %v: %v, want %v", tt.m, tt.offset, got, tt.keep)
		}
	}
}

// seen is a turn of conversation conv in project as the walk sees it.
func seen(id, conv, project string) *seenTurn {
	s := &seenTurn{}
	s.ID, s.Received = id, &turn.MessageReceived{Text: "m " + id}
	if conv != "" {
		s.Context = &turn.ContextBuilt{ConversationID: conv, Project: project}
	}
	return s
}

// Read newest first, the walk keeps the latest conversation of the
// project, skips commands and other projects, and stops at its first turn
// or an older conversation.
func TestConversationWalk(t *testing.T) {
	w := &conversationWalk{project: "", closed: map[string]bool{}}
	for _, s := range []*seenTurn{seen("t5", "", ""), seen("t4", "c2", "shop"), seen("t3", "t2", ""), seen("t2", "t2", ""), seen("t1", "t1", "")} {
		if w.see(s); w.done {
			break
		}
	}
	if w.conv == nil || w.conv.ID != "t2" || len(w.conv.Messages) != 2 || w.conv.Messages[0].Turn != "t2" {
		t.Fatalf("walk: %+v", w.conv)
	}
	w = &conversationWalk{project: "", closed: map[string]bool{}}
	closing := seen("t9", "", "")
	closing.closed = []string{"t2"}
	w.see(closing)
	if !w.closed["t2"] {
		t.Fatal("a turn's closing was not kept")
	}
}
