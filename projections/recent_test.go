package projections_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/projections"
	"github.com/omega-gateway/omega/projections/engine"
	"github.com/omega-gateway/omega/projections/projectionstest"
)

// RecentConversation: the latest conversation unless closed, with the
// same messages History reads, oldest first.
func TestRecentConversation(t *testing.T) {
	for _, b := range projectionstest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			s := b.Open(t)()
			eng := engine.New(s.DB(), s, b.Dialect, projectionstest.TurnsRegistry(), projectionstest.Quiet, projections.Turns{})
			if err := eng.Setup(ctx); err != nil {
				t.Fatal(err)
			}
			exec := func(q string, args ...any) {
				t.Helper()
				if _, err := s.DB().ExecContext(ctx, q, args...); err != nil {
					t.Fatal(err)
				}
			}
			conv := func(id, sender string, last int64, closed bool) {
				var closedAt any
				if closed {
					closedAt = last
				}
				exec(`INSERT INTO conversations (id, sender, project, started_at, last_at, messages, closed_at) VALUES ($1, $2, '', 1, $3, 0, $4)`,
					id, sender, last, closedAt)
			}
			msg := func(conversation, tn, role, text string, at int64) {
				exec(`INSERT INTO messages (turn_id, role, conversation_id, sender, project, text, at) VALUES ($1, $2, $3, 'x', '', $4, $5)`,
					tn, role, conversation, text, at)
			}
			conv("old", "http-ann", 10, false)
			msg("old", "t0", "user", "from an older conversation", 5)
			conv("cur", "http-ann", 100, false)
			for i := range 4 {
				at := int64(20 + 10*i)
				msg("cur", fmt.Sprintf("t%d", i+1), "user", fmt.Sprintf("q%d", i+1), at)
				msg("cur", fmt.Sprintf("t%d", i+1), "assistant", fmt.Sprintf("a%d", i+1), at)
			}
			conv("done", "http-bob", 50, true)
			msg("done", "t9", "user", "closed", 50)
			conv("quiet", "http-cid", 70, false)

			q, err := projections.NewQueries(s.DB(), b.Dialect)
			if err != nil {
				t.Fatal(err)
			}
			texts := func(h []turn.HistoryMessage) []string {
				var out []string
				for _, m := range h {
					out = append(out, m.Role+":"+m.Text+"@"+m.Turn)
				}
				return out
			}
			tests := []struct {
				sender  string
				limit   int
				ok      bool
				id      string
				history []string
			}{
				{"http-ann", 3, true, "cur", []string{"assistant:a3@t3", "user:q4@t4", "assistant:a4@t4"}},
				{"http-ann", 100, true, "cur", []string{"user:q1@t1", "assistant:a1@t1", "user:q2@t2", "assistant:a2@t2",
					"user:q3@t3", "assistant:a3@t3", "user:q4@t4", "assistant:a4@t4"}},
				{"http-ann", 0, true, "cur", nil},
				{"http-bob", 5, false, "", nil}, // the latest is closed
				{"http-cid", 5, true, "quiet", nil},
				{"http-dan", 5, false, "", nil},
			}
			for _, tc := range tests {
				got, ok, err := q.RecentConversation(ctx, tc.sender, "", tc.limit)
				if err != nil {
					t.Fatal(err)
				}
				if ok != tc.ok || got.ID != tc.id || !slices.Equal(texts(got.History), tc.history) {
					t.Errorf("%s limit %d: %v %q %v, want %v %q %v", tc.sender, tc.limit, ok, got.ID, texts(got.History), tc.ok, tc.id, tc.history)
				}
				// The messages are the ones History reads.
				if ok && tc.limit > 0 {
					h, err := q.History(ctx, got.ID, tc.limit)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(texts(h), texts(got.History)) {
						t.Errorf("%s: History says %v", tc.sender, texts(h))
					}
				}
			}
		})
	}
}

// BenchmarkRecentConversation: a turn's read of its conversation costs
// the same whatever the conversation's length (the messages are read
// backwards along their index and stopped at the limit).
func BenchmarkRecentConversation(b *testing.B) {
	for _, st := range projectionstest.Backends() {
		for _, n := range []int{100, 10_000} {
			b.Run(fmt.Sprintf("%s/messages=%d", st.Name, n), func(b *testing.B) {
				ctx := context.Background()
				s := st.Open(b)()
				eng := engine.New(s.DB(), s, st.Dialect, projectionstest.TurnsRegistry(), projectionstest.Quiet, projections.Turns{})
				if err := eng.Setup(ctx); err != nil {
					b.Fatal(err)
				}
				if _, err := s.DB().ExecContext(ctx, `INSERT INTO conversations (id, sender, project, started_at, last_at, messages) VALUES ('c', 'http-ann', '', 1, $1, $2)`, n, n); err != nil {
					b.Fatal(err)
				}
				tx, err := s.DB().BeginTx(ctx, nil)
				if err != nil {
					b.Fatal(err)
				}
				for i := range n {
					if _, err := tx.ExecContext(ctx, `INSERT INTO messages (turn_id, role, conversation_id, sender, project, text, at) VALUES ($1, 'user', 'c', 'http-ann', '', 'a message of some length', $2)`,
						fmt.Sprintf("t%d", i), i); err != nil {
						b.Fatal(err)
					}
				}
				if err := tx.Commit(); err != nil {
					b.Fatal(err)
				}
				q, err := projections.NewQueries(s.DB(), st.Dialect)
				if err != nil {
					b.Fatal(err)
				}
				for b.Loop() {
					c, ok, err := q.RecentConversation(ctx, "http-ann", "", 20)
					if err != nil || !ok || len(c.History) != 20 {
						b.Fatalf("%v %v %d", ok, err, len(c.History))
					}
				}
			})
		}
	}
}
