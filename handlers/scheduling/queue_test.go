package scheduling

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/handlers/pipeline"
	"github.com/omega-gateway/omega/handlers/scheduling/openq"
	"github.com/omega-gateway/omega/internal/twogen"
	"github.com/omega-gateway/omega/projections"
)

func queueEvent(t *testing.T, pos int64, tn string, p domain.Payload) domain.Event {
	t.Helper()
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return domain.Event{Position: pos, StreamID: domain.TurnStream(tn), ID: uuid.New(), Type: p.EventType(), Data: data,
		Metadata: domain.Metadata{Channel: "http", Sender: "ann"}}
}

// The shared copy of the open queues moves forward with the events the
// read model applied, as the read model moved: a message opens a turn at
// the end of its chat's queue, an acknowledgement marks it, a completion
// takes it out. It is read again (false) only when the window does not
// hold what was applied since the copy.
func TestAdvanceQueue(t *testing.T) {
	reg := domain.NewRegistry()
	turn.RegisterEvents(reg)
	// The log after position 10, as the shared reader holds it.
	log := []domain.Event{
		queueEvent(t, 11, "t2", turn.MessageReceived{Channel: "http", SenderID: "ann", ChatID: "ann"}),
		queueEvent(t, 12, "t1", turn.AckSent{}),
		queueEvent(t, 13, "t0", turn.TurnCompleted{Status: "ok"}),
		queueEvent(t, 14, "t3", turn.MessageReceived{Channel: "http", SenderID: "bob", ChatID: "g", IsGroup: true}),
	}
	window := func(after int64, fn func(domain.Event) bool) bool {
		if after < 10 || after > 14 {
			return false
		}
		for _, e := range log {
			if e.Position > after && !fn(e) {
				break
			}
		}
		return true
	}
	at := func(pos int64) func() (int64, bool) { return func() (int64, bool) { return pos, true } }
	ann := sender.SenderKey("http", "ann")
	fresh := func() *openq.Snapshot {
		return openq.New(0, time.Now(), []projections.OpenTurn{
			{ID: "t0", Chat: ann, Channel: "http"}, {ID: "t1", Chat: ann, Channel: "http"}}, 10)
	}
	tests := []struct {
		name    string
		copyAt  int64 // 0: no copy read yet
		window  logWindow
		through func() (int64, bool)
		want    bool
		queues  map[string][]string // chat -> open turns (acknowledged ones with a +)
	}{
		{"no copy yet", 0, window, at(12), false, nil},
		{"nothing applied since the copy", 10, window, at(10), true, map[string][]string{ann: {"t0", "t1"}}},
		{"a message", 10, window, at(11), true, map[string][]string{ann: {"t0", "t1", "t2"}}},
		{"and its acknowledgement", 10, window, at(12), true, map[string][]string{ann: {"t0", "t1+", "t2"}}},
		{"a completion and a group's message", 10, window, at(14), true,
			map[string][]string{ann: {"t1+", "t2"}, sender.GroupRef("http", "g").Key(): {"t3"}}},
		{"the applied position past the window", 10, window, at(99), false, nil},
		{"the copy's position not in the window", 7, window, at(12), false, nil},
		{"no shared reader", 10, nil, at(12), false, nil},
		{"no applied position", 10, window, func() (int64, bool) { return 0, false }, false, nil},
		{"not told the applied position", 10, window, nil, false, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &Scheduler{driver: &pipeline.Driver{Registry: reg}, chats: twogen.New[string, string](chatsKept)}
			if tc.copyAt != 0 {
				s.queue = fresh()
				s.queue.Applied = tc.copyAt
			}
			if got := s.advanceQueue(tc.window, tc.through); got != tc.want {
				t.Fatalf("advanceQueue = %v, want %v", got, tc.want)
			}
			if !tc.want {
				return
			}
			got := map[string][]string{}
			s.queue.Each(func(chat string, ts []projections.OpenTurn) {
				for _, t := range ts {
					id := t.ID
					if t.Acked {
						id += "+"
					}
					got[chat] = append(got[chat], id)
				}
			})
			if !maps.EqualFunc(got, tc.queues, slices.Equal) {
				t.Fatalf("queues %v, want %v", got, tc.queues)
			}
			if last, _ := tc.through(); s.queue.Applied != last {
				t.Fatalf("the copy is at %d, want %d", s.queue.Applied, last)
			}
		})
	}
}
