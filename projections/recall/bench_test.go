package recall_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/projections/projectionstest"
	"github.com/omega-gateway/omega/projections/readmodel"
	"github.com/omega-gateway/omega/projections/recall"
)

// The search benchmark's corpus: benchMessages messages (half the
// people's, half omega's replies) of benchPeople people, in
// conversations of benchPerConversation exchanges, written in words drawn
// from a vocabulary of benchWords with a Zipf distribution, as natural
// text is. Its benchStop most frequent words stand for the common words
// ("the", "que", "und") that omega leaves out of the index and of every
// query, so the messages and questions are drawn from the rest: a few
// words in many messages, most rare.
const (
	benchMessages        = 100_000
	benchPeople          = 50
	benchPerConversation = 10
	benchWords           = 20_000
	benchStop            = 100
	benchSeed            = 25
)

// vocabulary returns n distinct made-up words of two to four syllables.
func vocabulary(n int) []string {
	syl := []string{"ka", "lo", "mi", "ter", "sun", "ra", "vel", "do", "pi", "an", "qu", "es", "tor", "bel", "ni", "ga", "ro", "su", "fen", "lis"}
	r := rand.New(rand.NewPCG(benchSeed, 1))
	seen := map[string]bool{}
	out := make([]string, 0, n)
	for len(out) < n {
		var b strings.Builder
		for range 2 + r.IntN(3) {
			b.WriteString(syl[r.IntN(len(syl))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

type corpus struct {
	words []string
	zipf  *rand.Zipf
}

func newCorpus() *corpus {
	r := rand.New(rand.NewPCG(benchSeed, 2))
	return &corpus{words: vocabulary(benchWords), zipf: rand.NewZipf(r, 1.07, 2, benchWords-1)}
}

func (c *corpus) sentence(n int) string {
	ws := make([]string, n)
	for i := range ws {
		r := c.zipf.Uint64()
		for r < benchStop {
			r = c.zipf.Uint64()
		}
		ws[i] = c.words[r]
	}
	return strings.Join(ws, " ")
}

// seed applies the corpus's events to the read model directly, in large
// transactions (the engine's log and checkpoints are not what is
// measured).
func seed(b *testing.B, s projectionstest.Store, d readmodel.Dialect) {
	ctx := context.Background()
	reg := projectionstest.TurnsRegistry()
	c := newCorpus()
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	m := recall.ReadModel{}
	for _, stmt := range m.Schema(d, func(t string) string { return t }) {
		if _, err := s.DB().ExecContext(ctx, stmt); err != nil {
			b.Fatal(err)
		}
	}
	const perTx = 5_000
	for start := 0; start < benchMessages/2; start += perTx {
		tx, err := s.DB().BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		rtx := readmodel.NewTx(tx, d, reg, "", nil)
		for i := start; i < start+perTx && i < benchMessages/2; i++ {
			person := i % benchPeople
			conv := fmt.Sprintf("conv-%d-%d", person, i/benchPeople/benchPerConversation)
			id := fmt.Sprintf("turn-%06d", i)
			at = at.Add(time.Minute)
			for _, p := range []domain.Payload{
				turn.MessageReceived{Channel: "telegram", SenderID: fmt.Sprint(person), ChatID: fmt.Sprint(person), Text: c.sentence(12)},
				turn.ContextBuilt{ConversationID: conv},
				turn.ReplyReady{Text: c.sentence(30)},
			} {
				data, _ := json.Marshal(p)
				e := domain.Event{StreamID: domain.TurnStream(id), Type: p.EventType(), Data: data, RecordedAt: at}
				if err := m.Apply(ctx, rtx, e); err != nil {
					b.Fatal(err)
				}
			}
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	if d == readmodel.Postgres {
		if _, err := s.DB().ExecContext(ctx, "ANALYZE"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearch measures a search at 100,000 messages on each backend:
// "person" is the recall a turn makes (one person's passages, 20 hits),
// "everyone" omega search without --sender. Each query is four words of
// the corpus (common and rare alike, as a question is); p50 and p95 are
// reported per search.
func BenchmarkSearch(b *testing.B) {
	for _, be := range projectionstest.Backends() {
		b.Run(be.Name, func(b *testing.B) {
			s := be.Open(b)()
			seed(b, s, be.Dialect)
			x, err := recall.NewIndex(s.DB(), be.Dialect)
			if err != nil {
				b.Fatal(err)
			}
			for _, scope := range []string{"person", "everyone"} {
				b.Run(scope, func(b *testing.B) {
					c := newCorpus()
					r := rand.New(rand.NewPCG(benchSeed, 3))
					took := make([]time.Duration, 0, b.N)
					b.ResetTimer()
					for range b.N {
						q := recall.Query{Text: c.sentence(4), Limit: 20}
						if scope == "person" {
							q.Chat = fmt.Sprintf("telegram-%d", r.IntN(benchPeople))
						}
						start := time.Now()
						if _, err := x.Search(context.Background(), q); err != nil {
							b.Fatal(err)
						}
						took = append(took, time.Since(start))
					}
					b.StopTimer()
					slices.Sort(took)
					b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
					b.ReportMetric(float64(took[len(took)*95/100].Microseconds())/1000, "p95-ms")
				})
			}
		})
	}
}
