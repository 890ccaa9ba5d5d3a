package botapi

import (
	"strconv"
	"testing"
	"time"
)

// pacerOp is one pacer request at an offset from the start: a message
// (wantWait is how long it must wait) or a typing indicator (wantSent
// says whether it may go).
type pacerOp struct {
	at       time.Duration
	chat     string
	typing   bool
	courtesy bool // an acknowledgement: sent at once or skipped
	wantWait time.Duration
	wantSent bool
}

func TestPacer(t *testing.T) {
	burst := func(n int) []pacerOp {
		var ops []pacerOp
		for i := range n {
			ops = append(ops, pacerOp{chat: "a", wantWait: time.Duration(max(0, i-2)) * time.Second})
		}
		return ops
	}
	tests := []struct {
		name string
		ops  []pacerOp
	}{
		{"typing, ack and reply in a quiet chat all leave at once", []pacerOp{
			{chat: "a", typing: true, wantSent: true}, {chat: "a"}, {at: 300 * time.Millisecond, chat: "a"},
		}},
		{"a burst of 10 to one chat is spread at one per second", burst(10)},
		{"the first message to a chat quiet for a second leaves at once", append(burst(5),
			pacerOp{at: 3 * time.Second, chat: "a", wantWait: 0},
			pacerOp{at: 3 * time.Second, chat: "a", wantWait: time.Second},
		)},
		{"typing counts against the budget", []pacerOp{
			{chat: "a", typing: true, wantSent: true},
			{chat: "a"}, {chat: "a"},
			{at: 500 * time.Millisecond, chat: "a", wantWait: 500 * time.Millisecond},
		}},
		{"typing is skipped rather than taking a message's slot", []pacerOp{
			{chat: "a"},
			{at: 10 * time.Millisecond, chat: "a", typing: true},
			{at: 20 * time.Millisecond, chat: "a"},
			{at: 30 * time.Millisecond, chat: "a"},
		}},
		{"an acknowledgement in a quiet chat leaves at once, and so does the reply", []pacerOp{
			{chat: "a", courtesy: true, wantSent: true}, {chat: "a"},
		}},
		{"an acknowledgement that would take the reply's slot is skipped", []pacerOp{
			{chat: "a"}, {chat: "a"},
			{at: 10 * time.Millisecond, chat: "a", courtesy: true},
			{at: 20 * time.Millisecond, chat: "a"},
		}},
		{"chats do not wait for each other", []pacerOp{
			{chat: "a"}, {chat: "a"}, {chat: "a"}, {chat: "b"}, {chat: "a", wantWait: time.Second},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewPacer()
			start := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
			for i, op := range tt.ops {
				now := start.Add(op.at)
				if op.typing || op.courtesy {
					try := p.TryAction
					if op.courtesy {
						try = p.TryCourtesy
					}
					if got := try(op.chat, now); got != op.wantSent {
						t.Errorf("op %d: typing or acknowledgement sent = %v, want %v", i, got, op.wantSent)
					}
					continue
				}
				if got := p.Reserve(op.chat, now); got != op.wantWait {
					t.Errorf("op %d: message waits %v, want %v", i, got, op.wantWait)
				}
			}
		})
	}
}

// Thirty messages a second overall: the 31st, to a fresh chat, waits, and
// so does a typing indicator.
func TestPacerGlobalLimit(t *testing.T) {
	p := NewPacer()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for i := range globalBurst {
		if d := p.Reserve(strconv.Itoa(i), now); d != 0 {
			t.Fatalf("message %d delayed %v", i+1, d)
		}
	}
	if d := p.Reserve("late", now); d <= 0 || d > time.Second/30+time.Millisecond {
		t.Errorf("message beyond the global burst waits %v, want about 1/30 s", d)
	}
	if p.TryAction("quiet", now) {
		t.Error("typing sent beyond the global budget")
	}
}
