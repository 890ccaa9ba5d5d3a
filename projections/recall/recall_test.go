package recall_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/summary"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/projections/engine"
	"github.com/omega-gateway/omega/projections/projectionstest"
	"github.com/omega-gateway/omega/projections/readmodel"
	"github.com/omega-gateway/omega/projections/recall"
)

// world is a store with the recall read model and its index.
type world struct {
	t     *testing.T
	ctx   context.Context
	store projectionstest.Store
	eng   *engine.Engine
	index *recall.Index
	d     readmodel.Dialect
}

func open(t *testing.T, b projectionstest.Backend) *world {
	t.Helper()
	ctx := context.Background()
	s := b.Open(t)()
	eng := engine.New(s.DB(), s, b.Dialect, projectionstest.TurnsRegistry(), projectionstest.Quiet, recall.ReadModel{})
	if err := eng.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	x, err := recall.NewIndex(s.DB(), b.Dialect)
	if err != nil {
		t.Fatal(err)
	}
	return &world{t: t, ctx: ctx, store: s, eng: eng, index: x, d: b.Dialect}
}

func (w *world) append(stream string, ps ...domain.Payload) {
	w.t.Helper()
	var evs []domain.NewEvent
	for _, p := range ps {
		ev, err := domain.NewEventFrom(p, domain.Metadata{})
		if err != nil {
			w.t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	if _, err := w.store.Append(w.ctx, stream, eventstore.Any, evs...); err != nil {
		w.t.Fatal(err)
	}
}

// exchange records one turn of conversation conv: the person's message
// and omega's reply (empty: none).
func (w *world) exchange(senderID, conv, msg, reply string) string {
	id := uuid.NewString()
	ps := []domain.Payload{
		turn.MessageReceived{Channel: "http", SenderID: senderID, ChatID: senderID, Text: msg},
		turn.ContextBuilt{ConversationID: conv, Language: "English"},
	}
	if reply != "" {
		ps = append(ps, turn.ReplyReady{Text: reply})
	}
	w.append(domain.TurnStream(id), ps...)
	return id
}

func (w *world) catchUp() {
	w.t.Helper()
	if err := w.eng.CatchUp(w.ctx); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) search(q recall.Query) []recall.Hit {
	w.t.Helper()
	hits, err := w.index.Search(w.ctx, q)
	if err != nil {
		w.t.Fatal(err)
	}
	return hits
}

// A chat's search finds its own passages, never another person's, and
// leaves out the conversation it is told to; summaries and merged
// messages are found too.
func TestSearchIsolatesPeople(t *testing.T) {
	for _, b := range projectionstest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			w := open(t, b)
			w.exchange("ann", "ann-1", "My lasagna recipe needs more béchamel", "Use 500 ml of milk for the béchamel.")
			w.exchange("bob", "bob-1", "My lasagna recipe is too dry", "Add more tomato sauce to the lasagna.")
			w.exchange("ann", "ann-2", "Planning the lasagna dinner for Friday", "")
			merged := w.exchange("ann", "ann-3", "Hello", "Hi!")
			w.append(domain.TurnStream(merged), turn.MessagesMerged{Texts: []string{"also the zucchini question"}})
			w.append(summary.SummaryStream("ann-1"), turn.ConversationClosed{ConversationID: "ann-1", Sender: "http-ann",
				Summary: "Ann asked about the quantities of a vegetarian moussaka."})
			w.catchUp()

			hits := w.search(recall.Query{Text: "what about the lasagna?", Chat: "http-ann"})
			if len(hits) != 2 {
				t.Fatalf("ann's lasagna: %d hits, want 2: %+v", len(hits), hits)
			}
			for _, h := range hits {
				if h.Chat != "http-ann" || h.ConversationID == "bob-1" {
					t.Fatalf("ann's search found another person's passage: %+v", h)
				}
			}
			if got := recall.Conversations(hits, 3); !slices.Contains(got, "ann-1") || !slices.Contains(got, "ann-2") {
				t.Fatalf("conversations %v", got)
			}
			hits = w.search(recall.Query{Text: "lasagna", Chat: "http-ann", Except: "ann-1"})
			if len(hits) != 1 || hits[0].ConversationID != "ann-2" || hits[0].Kind != recall.KindUser {
				t.Fatalf("except ann-1: %+v", hits)
			}
			if hits := w.search(recall.Query{Text: "lasagna", Chat: "http-bob"}); len(hits) != 2 || hits[0].Chat != "http-bob" {
				t.Fatalf("bob's: %+v", hits)
			}
			if hits := w.search(recall.Query{Text: "lasagna"}); len(hits) != 4 {
				t.Fatalf("everyone's: %d hits, want 4", len(hits))
			}
			if hits := w.search(recall.Query{Text: "moussaka", Chat: "http-ann"}); len(hits) != 1 || hits[0].Kind != recall.KindSummary {
				t.Fatalf("summary: %+v", hits)
			}
			if hits := w.search(recall.Query{Text: "zucchinis", Chat: "http-ann"}); len(hits) != 1 || hits[0].ConversationID != "ann-3" {
				t.Fatalf("merged message: %+v", hits)
			}
			if hits := w.search(recall.Query{Text: "the and of", Chat: "http-ann"}); len(hits) != 0 {
				t.Fatalf("common words only: %+v", hits)
			}
			if hits := w.search(recall.Query{Text: `lasagna" OR owner:* NEAR( 'x`, Chat: "http-bob"}); len(hits) == 0 || hits[0].Chat != "http-bob" {
				t.Fatalf("query syntax in the text: %+v", hits)
			}
		})
	}
}

// A rebuild from the log gives the live index row for row.
func TestRebuildIsIdentical(t *testing.T) {
	for _, b := range projectionstest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			w := open(t, b)
			for i := range 30 {
				w.exchange([]string{"ann", "bob"}[i%2], fmt.Sprintf("c%d", i%7), fmt.Sprintf("message %d about topic %d", i, i%5), fmt.Sprintf("reply %d", i))
			}
			w.append(summary.SummaryStream("c1"), turn.ConversationClosed{ConversationID: "c1", Sender: "http-bob", Summary: "topic summary"})
			w.catchUp()
			before := w.search(recall.Query{Text: "topic message", Limit: 100})
			diffs, err := w.eng.Verify(w.ctx, []readmodel.Projection{recall.ReadModel{}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(diffs) != 0 {
				t.Fatalf("verify: %v", diffs)
			}
			if err := w.eng.Rebuild(w.ctx, []readmodel.Projection{recall.ReadModel{}}, nil); err != nil {
				t.Fatal(err)
			}
			after := w.search(recall.Query{Text: "topic message", Limit: 100})
			if len(before) != 31 || !slices.Equal(before, after) {
				t.Fatalf("rebuilt search differs: %d hits before, %d after", len(before), len(after))
			}
		})
	}
}

type labelled struct {
	Conversations []struct {
		ID    string   `json:"id"`
		Texts []string `json:"texts"`
	} `json:"conversations"`
	Questions []struct {
		Q      string `json:"q"`
		Answer string `json:"answer"`
	} `json:"questions"`
}

// The labelled set: each question's answer is in one of ann's older
// conversations among many; bob holds the same conversations, which
// ann's search must never return. The right conversation must be in the
// top 3 for at least 90 % of the questions.
func TestLabelledRecall(t *testing.T) {
	raw, err := os.ReadFile("testdata/labelled.json")
	if err != nil {
		t.Fatal(err)
	}
	var set labelled
	if err := json.Unmarshal(raw, &set); err != nil {
		t.Fatal(err)
	}
	for _, b := range projectionstest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			w := open(t, b)
			for _, who := range []string{"ann", "bob"} {
				for _, c := range set.Conversations {
					for i := 0; i < len(c.Texts); i += 2 {
						reply := ""
						if i+1 < len(c.Texts) {
							reply = c.Texts[i+1]
						}
						w.exchange(who, who+"-"+c.ID, c.Texts[i], reply)
					}
				}
			}
			w.catchUp()
			right := 0
			for _, q := range set.Questions {
				hits := w.search(recall.Query{Text: q.Q, Chat: "http-ann", Limit: 30})
				for _, h := range hits {
					if h.Chat != "http-ann" {
						t.Fatalf("%q found bob's passage %+v", q.Q, h)
					}
				}
				top := recall.Conversations(hits, 3)
				if slices.Contains(top, "ann-"+q.Answer) {
					right++
				} else {
					t.Logf("miss: %q wants %s, got %v", q.Q, q.Answer, top)
				}
			}
			score := float64(right) / float64(len(set.Questions))
			t.Logf("%s: right conversation in the top 3 for %d of %d questions (%.1f %%)", b.Name, right, len(set.Questions), 100*score)
			if score < 0.9 {
				t.Fatalf("recall score %.1f %% is below 90 %%", 100*score)
			}
		})
	}
}
