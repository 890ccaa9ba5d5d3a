package rerun

import (
	"encoding/json"
	"testing"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
)

func event(t *testing.T, p domain.Payload) domain.Event {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return domain.Event{Type: p.EventType(), Data: b}
}

// Whether a slow answer was acknowledged depends on the machine's speed,
// so a re-run that was faster or slower than the recorded turn is still
// the same decision; a different reply is not.
func TestNormalizeIgnoresTheClockOnly(t *testing.T) {
	recorded := []domain.Event{
		event(t, turn.AckSent{Text: "Got it"}),
		event(t, turn.ReplySent{Text: "hello"}),
	}
	tests := []struct {
		name      string
		produced  []domain.Event
		identical bool
	}{
		{"no acknowledgement", []domain.Event{event(t, turn.ReplySent{Text: "hello"})}, true},
		{"same events", recorded, true},
		{"different reply", []domain.Event{event(t, turn.ReplySent{Text: "bye"})}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, _ := compare(normalize(recorded), normalize(tt.produced))
			if got := len(d) == 0; got != tt.identical {
				t.Fatalf("identical = %v, want %v: %q", got, tt.identical, d)
			}
		})
	}
}

// A turn recorded when an empty finding of workspace images was still
// recorded re-runs identical without it; a finding that lists an image
// still counts.
func TestNormalizeIgnoresAnEmptyImageFinding(t *testing.T) {
	sent := event(t, turn.ReplySent{Text: "hello"})
	done := event(t, turn.TurnCompleted{Status: "ok"})
	chart := turn.WorkspaceImagesFound{Images: []turn.WorkspaceImage{{Path: "chart.png"}}}
	tests := []struct {
		name      string
		recorded  []domain.Event
		identical bool
	}{
		{"empty finding", []domain.Event{sent, event(t, turn.WorkspaceImagesFound{}), done}, true},
		{"a finding with an image", []domain.Event{sent, event(t, chart), done}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, _ := compare(normalize(tt.recorded), normalize([]domain.Event{sent, done}))
			if got := len(d) == 0; got != tt.identical {
				t.Fatalf("identical = %v, want %v: %q", got, tt.identical, d)
			}
		})
	}
}

// A reply recorded with its text compares equal to one that leaves it to
// ReplyReady; a different text does not.
func TestNormalizeReadsTheSentText(t *testing.T) {
	ready := event(t, turn.ReplyReady{Text: "hello"})
	recorded := []domain.Event{ready, event(t, turn.ReplySent{Kind: "reply", Text: "hello", Chunks: 1})}
	tests := []struct {
		name      string
		produced  []domain.Event
		identical bool
	}{
		{"text left to ReplyReady", []domain.Event{ready, event(t, turn.ReplySent{Kind: "reply", Chunks: 1})}, true},
		{"a different ready text", []domain.Event{event(t, turn.ReplyReady{Text: "bye"}), event(t, turn.ReplySent{Kind: "reply", Chunks: 1})}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, _ := compare(normalize(recorded), normalize(tt.produced))
			if got := len(d) == 0; got != tt.identical {
				t.Fatalf("identical = %v, want %v: %q", got, tt.identical, d)
			}
		})
	}
}
