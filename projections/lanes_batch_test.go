package projections_test

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/projections/providercalls"
	"github.com/omega-gateway/omega/projections/recall"
)

// The provider calls applied in batches (one statement a batch on
// PostgreSQL) are the calls applied event by event: every call of every
// purpose, failed ones too, with its usage.
func TestProviderCallsBatchMatchOneByOne(t *testing.T) {
	matchesOneByOne(t, providercalls.ReadModel{}, randomTurnLog, 100,
		"SELECT * FROM %[1]sprovider_calls ORDER BY position")
}

// The search index applied in batches (three statements a batch on
// PostgreSQL) holds exactly what it holds applied event by event: the
// turns it follows, their passages (merged bursts, replies, summaries; a
// passage indexed again keeps its first time and takes the new text) and
// their index entries.
func TestRecallBatchMatchesOneByOne(t *testing.T) {
	matchesOneByOne(t, recall.ReadModel{}, reindexedLog, 150,
		"SELECT * FROM %[1]srecall_turns ORDER BY turn_id",
		"SELECT * FROM %[1]srecall_passages ORDER BY key",
		"SELECT key, chat, conversation_id, tsv::text, owned::text FROM %[1]srecall_fts ORDER BY key")
}

// reindexedLog is randomTurnLog with what makes the index change a
// passage it holds: a burst merged into a message after its context, a
// reply given again; and texts with NUL, a blank message, a reply to no
// message.
func reindexedLog(t *testing.T, rng *rand.Rand, n int) []domain.Event {
	evs := randomTurnLog(t, rng, n)
	add := func(stream string, p domain.Payload) {
		data, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		last := evs[len(evs)-1]
		evs = append(evs, domain.Event{Position: last.Position + 1, StreamID: stream, ID: uuid.New(),
			Type: p.EventType(), Data: data, RecordedAt: last.RecordedAt.Add(time.Millisecond)})
	}
	for _, e := range evs[:len(evs):len(evs)] {
		if e.Type == (turn.ContextBuilt{}).EventType() && rng.IntN(3) == 0 {
			add(e.StreamID, turn.MessagesMerged{Turns: []string{"y"}, Texts: []string{"late\x00 words"}})
			add(e.StreamID, turn.ReplyReady{Text: "said again"})
		}
	}
	conv := uuid.NewString()
	for _, text := range []string{"nul\x00 inside", "   "} {
		stream := domain.TurnStream(uuid.NewString())
		add(stream, turn.MessageReceived{Channel: "http", SenderID: "eve\x00", ChatID: "eve\x00", Text: text})
		add(stream, turn.ContextBuilt{ConversationID: conv, Project: "p\x00", Language: "en", Model: "fast"})
		add(stream, turn.ReplyReady{Text: "re\x00ply"})
	}
	add(domain.TurnStream(uuid.NewString()), turn.ReplyReady{Text: "to nothing"})
	return evs
}
