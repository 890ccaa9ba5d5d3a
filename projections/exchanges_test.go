package projections_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/markers"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/projections"
	"github.com/omega-gateway/omega/projections/engine"
	"github.com/omega-gateway/omega/projections/exchanges"
	"github.com/omega-gateway/omega/projections/projectionstest"
)

// The exchanges a process keeps of the turns it completed, added to what
// the turns read model shows at any point of the log (its applier behind
// by any number of events, a turn's context applied and not its reply
// yet), give the conversation the read model shows once it has applied
// them: the same conversation, last activity and history, for every
// history limit. A chat with a turn whose exchange is not kept (a
// command, markers) is left out, as the scheduler waits for the read
// model there.
func TestKeptExchangesGiveTheAppliedConversation(t *testing.T) {
	for _, b := range projectionstest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			compared := 0
			for seed := range uint64(8) {
				compared += compareKeptExchanges(t, b, rand.New(rand.NewPCG(seed, 11)))
			}
			if compared < 10 {
				t.Fatalf("only %d chats had exchanges the read model did not show yet", compared)
			}
		})
	}
}

// compareKeptExchanges cuts a random log of sequential chats at a random
// event, and returns how many chats it compared with exchanges the read
// model did not show at the cut.
func compareKeptExchanges(t *testing.T, b projectionstest.Backend, rng *rand.Rand) int {
	t.Helper()
	ctx := context.Background()
	s := b.Open(t)()
	eng := engine.New(s.DB(), s, b.Dialect, projectionstest.TurnsRegistry(), projectionstest.Quiet, projections.Turns{})
	if err := eng.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	q, err := projections.NewQueries(s.DB(), b.Dialect)
	if err != nil {
		t.Fatal(err)
	}
	log := sequentialChats(rng, 6, 6)
	cut := rng.IntN(len(log.events) + 1)
	if rng.IntN(2) == 0 {
		// Right after a turn's context: its reply is not applied yet.
		var built []int
		for i, e := range log.events {
			if _, ok := e.p.(turn.ContextBuilt); ok {
				built = append(built, i+1)
			}
		}
		cut = built[rng.IntN(len(built))]
	}
	appendAll(t, s, log.events[:cut])
	if err := eng.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	appendAll(t, s, log.events[cut:])

	limits := []int{0, 1, 3, 100}
	type view struct {
		ok bool
		c  projections.RecentConversation
	}
	kept := map[string][]view{}
	compared := 0
	for chat, turns := range log.turns {
		pending, eligible := keptExchanges(t, s, chat, turns, log.lastEvent, cut)
		if !eligible {
			continue
		}
		for _, limit := range limits {
			c, ok, applied, err := q.RecentConversationWith(ctx, chat, "p", limit, pending)
			if err != nil {
				t.Fatal(err)
			}
			kept[chat] = append(kept[chat], view{ok, c})
			if limit == limits[0] && len(applied) < len(pending) {
				compared++
			}
		}
	}
	if err := eng.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	for chat, views := range kept {
		for i, limit := range limits {
			c, ok, err := q.RecentConversation(ctx, chat, "p", limit)
			if err != nil {
				t.Fatal(err)
			}
			got := views[i]
			if got.ok != ok || got.c.ID != c.ID || !got.c.LastAt.Equal(c.LastAt) || !slices.Equal(got.c.History, c.History) {
				t.Errorf("chat %s, limit %d, log cut at %d of %d:\nkept exchanges gave %v %+v\nthe read model shows %v %+v",
					chat, limit, cut, len(log.events), got.ok, got.c, ok, c)
			}
		}
	}
	return compared
}

// keptExchanges returns the exchanges a process that ran the chat's turns
// keeps, and false when one of the turns not wholly applied at the cut has
// none (the scheduler waits for the read model then).
func keptExchanges(t *testing.T, s eventstore.Store, chat string, turns []string, lastEvent map[string]int, cut int) ([]exchanges.Exchange, bool) {
	t.Helper()
	var out []exchanges.Exchange
	for _, tn := range turns {
		evs, err := s.Load(context.Background(), domain.TurnStream(tn), 1)
		if err != nil {
			t.Fatal(err)
		}
		x, ok, err := exchanges.Of(projectionstest.TurnsRegistry(), chat, evs)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			if lastEvent[tn] >= cut {
				return nil, false
			}
			continue
		}
		out = append(out, x)
	}
	return out, true
}

// chatLog is a log of several chats, each running its turns one after
// another, the chats interleaved.
type chatLog struct {
	events    []loggedEvent
	turns     map[string][]string // chat key -> its turns, in order
	lastEvent map[string]int      // turn -> index of its last event
}

type loggedEvent struct {
	stream string
	p      domain.Payload
}

func sequentialChats(rng *rand.Rand, chats, turnsEach int) chatLog {
	log := chatLog{turns: map[string][]string{}, lastEvent: map[string]int{}}
	type chatRun struct {
		key, conv string
		left      int
		tn        string
		script    []domain.Payload
	}
	var runs []*chatRun
	for i := range chats {
		m := turn.MessageReceived{Channel: "http", SenderID: fmt.Sprintf("s%d", i), ChatID: fmt.Sprintf("s%d", i)}
		runs = append(runs, &chatRun{key: m.Chat().Key(), left: turnsEach})
	}
	for len(runs) > 0 {
		k := rng.IntN(len(runs))
		r := runs[k]
		if len(r.script) == 0 {
			r.tn = uuid.NewString()
			if r.conv == "" || rng.IntN(4) == 0 {
				r.conv = r.tn // a turn starts a conversation named after it
			}
			r.script = chatTurn(rng, r.key, r.conv)
			if _, closes := r.script[1].(turn.ConversationClosed); closes {
				r.conv = "" // the next message starts a new conversation
			}
			log.turns[r.key] = append(log.turns[r.key], r.tn)
		}
		log.events = append(log.events, loggedEvent{domain.TurnStream(r.tn), r.script[0]})
		log.lastEvent[r.tn] = len(log.events) - 1
		if r.script = r.script[1:]; len(r.script) == 0 {
			if r.left--; r.left == 0 {
				runs = slices.Delete(runs, k, k+1)
			}
		}
	}
	return log
}

// chatTurn is one turn of a chat: mostly a message answered (a burst
// merged into it now and then, sometimes in another project), now and
// then markers applied or a command that closes the conversation.
func chatTurn(rng *rand.Rand, key, conv string) []domain.Payload {
	id := key[len("http-"):]
	n := rng.IntN(1000)
	ps := []domain.Payload{turn.MessageReceived{Channel: "http", SenderID: id, ChatID: id, Text: fmt.Sprintf("message %d", n)}}
	if rng.IntN(8) == 0 {
		return append(ps, turn.ConversationClosed{ConversationID: conv, Sender: key, Project: "p"},
			turn.CommandAnswered{Command: "/forget", Reply: "forgotten"}, turn.TurnCompleted{Status: turn.StatusCommand})
	}
	if rng.IntN(5) == 0 {
		ps = append(ps, turn.MessagesMerged{Turns: []string{"x"}, Texts: []string{"and more", "and the rest"}})
	}
	project := "p"
	if rng.IntN(10) == 0 {
		// Another project's conversation is another conversation.
		project, conv = "q", "q-"+conv
	}
	ps = append(ps, turn.ContextBuilt{ConversationID: conv, Project: project, Language: "en", Model: "fast"},
		turn.ProviderReplied{Provider: "openai", Model: "fast", Text: "raw", DurationMs: 3})
	if rng.IntN(8) == 0 {
		ps = append(ps, turn.MarkersApplied{Markers: []markers.AppliedMarker{{Name: "SCHEDULE", Effect: "scheduled", Stream: "task-x"}}})
	}
	return append(ps, turn.ReplyReady{Text: fmt.Sprintf("reply %d", n)}, turn.TurnCompleted{Status: turn.StatusOK, DurationMs: 5})
}

func appendAll(t *testing.T, s eventstore.Store, evs []loggedEvent) {
	t.Helper()
	for _, e := range evs {
		ne, err := domain.NewEventFrom(e.p, domain.Metadata{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Append(context.Background(), e.stream, eventstore.Any, ne); err != nil {
			t.Fatal(err)
		}
	}
}
