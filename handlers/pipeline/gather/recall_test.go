package gather

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/omega-gateway/omega/projections/recall"
)

type fakeRecall struct {
	hits []recall.Hit
	err  error
	got  []recall.Query
}

func (f *fakeRecall) Search(_ context.Context, q recall.Query) ([]recall.Hit, error) {
	f.got = append(f.got, q)
	return f.hits, f.err
}

// Only a message that asks to recall searches, in its own chat and
// without its own conversation; at most recalledPassages join the
// context, and a failed search leaves the turn without them.
func TestRecalledPassages(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	many := make([]recall.Hit, 9)
	for i := range many {
		many[i] = recall.Hit{ConversationID: "c", TurnID: "t", Kind: recall.KindUser, At: at, Text: "greyhound"}
	}
	tests := []struct {
		name, message string
		index         *fakeRecall
		want          int
		searched      bool
	}{
		{"asked", "do you remember the greyhound?", &fakeRecall{hits: many}, recalledPassages, true},
		{"not asked", "tell me about greyhounds", &fakeRecall{hits: many}, 0, false},
		{"search fails", "do you remember the greyhound?", &fakeRecall{err: errors.New("database gone")}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &Gatherer{Recall: tt.index, Logger: slog.New(slog.DiscardHandler)}
			got := g.recalled(context.Background(), "telegram-1", "conv-now", tt.message)
			if len(got) != tt.want {
				t.Fatalf("%d passages, want %d", len(got), tt.want)
			}
			if searched := len(tt.index.got) > 0; searched != tt.searched {
				t.Fatalf("searched %v, want %v", searched, tt.searched)
			}
			if tt.searched {
				if q := tt.index.got[0]; q.Chat != "telegram-1" || q.Except != "conv-now" || q.Text != tt.message {
					t.Fatalf("query %+v", q)
				}
			}
			if tt.want > 0 && (got[0].Text != "greyhound" || !got[0].At.Equal(at) || got[0].Conversation != "c" || got[0].Turn != "t") {
				t.Fatalf("passage %+v", got[0])
			}
		})
	}
	if got := (&Gatherer{}).recalled(context.Background(), "c", "", "do you remember?"); got != nil {
		t.Fatalf("no index recalled %v", got)
	}
}
