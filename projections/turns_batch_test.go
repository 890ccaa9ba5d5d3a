package projections_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/summary"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/domain/usage"
	"github.com/omega-gateway/omega/eventstore/postgres"
	"github.com/omega-gateway/omega/internal/pgtest"
	"github.com/omega-gateway/omega/projections"
	"github.com/omega-gateway/omega/projections/projectionstest"
	"github.com/omega-gateway/omega/projections/readmodel"
)

// The turns read model applied in batches (multi-row statements on
// PostgreSQL) holds exactly what it holds applied event by event: turns,
// conversations, messages and the audit, over random logs in which many
// turns of a few chats interleave (acknowledged, merged, failing and
// retried calls, plans, commands, conversations closed and started
// again, recording times out of order), cut into random batches.
func TestTurnsBatchMatchesOneByOne(t *testing.T) {
	matchesOneByOne(t, projections.Turns{}, randomTurnLog, 300,
		"SELECT * FROM %[1]sturns ORDER BY turn_id",
		"SELECT * FROM %[1]sconversations ORDER BY id",
		"SELECT * FROM %[1]smessages ORDER BY turn_id, role",
		"SELECT * FROM %[1]saudit ORDER BY turn_id")
}

// batchProjection is a read model that applies a batch at once.
type batchProjection interface {
	readmodel.Projection
	ApplyBatch(ctx context.Context, tx *readmodel.Tx, evs []domain.Event) error
}

// matchesOneByOne applies random logs (made by log) to p on PostgreSQL
// event by event, in random batches, in batches of one and in one batch,
// and fails unless the tables (dumped by queries, the prefix as %[1]s)
// are the same every way and hold at least minRows rows.
func matchesOneByOne(t *testing.T, p batchProjection, log func(*testing.T, *rand.Rand, int) []domain.Event, minRows int, queries ...string) {
	t.Helper()
	ctx := context.Background()
	s, err := postgres.Open(ctx, pgtest.DSN(t), postgres.Options{Logger: projectionstest.Quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	reg := newRegistry()
	for seed := range uint64(6) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 27))
			evs := log(t, rng, 80)
			apply := func(prefix string, batches func(int) int) string {
				for _, q := range p.Schema(readmodel.Postgres, func(n string) string { return prefix + n }) {
					if _, err := s.DB().ExecContext(ctx, q); err != nil {
						t.Fatal(err)
					}
				}
				tx, err := s.DB().BeginTx(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer func() { _ = tx.Rollback() }()
				rtx := readmodel.NewTx(tx, readmodel.Postgres, reg, prefix, nil)
				if batches == nil {
					for _, e := range evs {
						if err := p.Apply(ctx, rtx, e); err != nil {
							t.Fatalf("%s: %v", prefix, err)
						}
					}
					return dumpTables(t, tx, prefix, queries)
				}
				for rest := evs; len(rest) > 0; {
					n := min(batches(len(rest)), len(rest))
					if err := p.ApplyBatch(ctx, rtx, rest[:n]); err != nil {
						t.Fatalf("%s: %v", prefix, err)
					}
					rest = rest[n:]
				}
				return dumpTables(t, tx, prefix, queries)
			}
			pre := fmt.Sprintf("s%d_%s_", seed, p.Name())
			single := apply(pre+"one_", nil)
			batched := apply(pre+"batch_", func(left int) int { return 1 + rng.IntN(min(left, 150)) })
			whole := apply(pre+"whole_", func(left int) int { return left })
			ones := apply(pre+"ones_", func(int) int { return 1 })
			if ones != single {
				t.Errorf("batches of one differ from one by one:\nbatches:\n%s\none by one:\n%s", ones, single)
			}
			if batched != single {
				t.Errorf("batched differs from one by one:\nbatched:\n%s\none by one:\n%s", batched, single)
			}
			if whole != single {
				t.Errorf("one batch differs from one by one:\nwhole:\n%s\none by one:\n%s", whole, single)
			}
			if n := strings.Count(single, "\n"); n < minRows {
				t.Errorf("suspiciously little state: %d rows\n%s", n, single)
			}
		})
	}
}

// dumpTables returns the rows queries select, the prefix as %[1]s.
func dumpTables(t *testing.T, tx *sql.Tx, prefix string, queries []string) string {
	t.Helper()
	var out strings.Builder
	for _, q := range queries {
		rows, err := tx.Query(fmt.Sprintf(q, prefix))
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		vals, ptrs := make([]any, len(cols)), make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				if b, ok := v.([]byte); ok {
					vals[i] = string(b)
				}
			}
			fmt.Fprintln(&out, vals...)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	return out.String()
}

// turnScript is one turn's events still to be logged.
type turnScript struct {
	stream string
	events []domain.Payload
}

// randomTurnLog makes n turns of a few chats, their events interleaved at
// random (each turn's in its own order), with conversations closed by
// their summaries now and then.
func randomTurnLog(t *testing.T, rng *rand.Rand, n int) []domain.Event {
	t.Helper()
	chats := []string{"ana", "bo", "cy", "dee"}
	conv := map[string]string{}
	var scripts []*turnScript
	var closes []domain.Payload
	for i := range n {
		chat := chats[rng.IntN(len(chats))]
		if conv[chat] == "" || rng.IntN(8) == 0 {
			if old := conv[chat]; old != "" {
				closes = append(closes, turn.ConversationClosed{ConversationID: old, Sender: "http-" + chat, Summary: "s", Reason: "idle"})
			}
			conv[chat] = uuid.NewString()
		}
		scripts = append(scripts, &turnScript{stream: domain.TurnStream(uuid.NewString()), events: turnEvents(rng, i, chat, conv[chat])})
	}
	var evs []domain.Event
	start := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	add := func(stream string, p domain.Payload) {
		data, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		// Recording times mostly rise, sometimes step back (clocks of
		// several processes).
		at := start.Add(time.Duration(len(evs))*time.Millisecond - time.Duration(rng.IntN(5))*time.Millisecond)
		evs = append(evs, domain.Event{Position: int64(len(evs) + 1), StreamID: stream, ID: uuid.New(),
			Type: p.EventType(), Data: data, RecordedAt: at})
	}
	for len(scripts) > 0 {
		k := rng.IntN(min(len(scripts), 6)) // a few turns in flight at once
		sc := scripts[k]
		add(sc.stream, sc.events[0])
		if sc.events = sc.events[1:]; len(sc.events) == 0 {
			scripts = append(scripts[:k], scripts[k+1:]...)
		}
		if len(closes) > 0 && rng.IntN(10) == 0 {
			c := closes[0].(turn.ConversationClosed)
			add(summary.SummaryStream(c.ConversationID), c)
			closes = closes[1:]
		}
	}
	return evs
}

// turnEvents is one turn's life: a command, or a message answered
// directly or by a plan, with what may happen on the way.
func turnEvents(rng *rand.Rand, i int, chat, conv string) []domain.Payload {
	text := fmt.Sprintf("message %d from %s", i, chat)
	ps := []domain.Payload{turn.MessageReceived{Channel: "http", SenderID: chat, ChatID: chat, Text: text}}
	if rng.IntN(4) == 0 {
		ps = append(ps, turn.AckSent{Text: "one moment"})
	}
	if rng.IntN(6) == 0 {
		ps = append(ps, turn.MessagesMerged{Turns: []string{"x"}, Texts: []string{"and another", "and a third"}})
	}
	if rng.IntN(7) == 0 {
		return append(ps, turn.CommandAnswered{Command: "/help", Reply: "help text"}, turn.TurnCompleted{Status: turn.StatusCommand})
	}
	ps = append(ps, turn.ContextBuilt{ConversationID: conv, Project: "p", Language: "en", Model: "fast"})
	used := &usage.CallUsage{DurationMs: 7, InputTokens: 11, OutputTokens: 3, CostUSD: 0.0001, UsageReported: true}
	if rng.IntN(3) == 0 {
		ps = append(ps, turn.RouteDecided{Steps: []string{"a", "b"}, Model: "complex", Usage: used},
			turn.PlanStepCompleted{Index: 1, Text: "a", Reply: "ra", Usage: used},
			turn.PlanStepCompleted{Index: 2, Text: "b", Reply: "rb", Usage: used})
	} else {
		ps = append(ps, turn.RouteDecided{Direct: true, Model: "fast"})
		if rng.IntN(4) == 0 {
			ps = append(ps, turn.ProviderFailed{Provider: "openai", Class: "server", Message: "boom", DurationMs: 30})
		}
		ps = append(ps, turn.ProviderReplied{Provider: "openai", Model: fmt.Sprintf("m%d", i%3), Text: "raw", DurationMs: 12,
			InputTokens: 100 + i, OutputTokens: 20, PromptBytes: 300, ReplyBytes: 40, CostUSD: 0.00123, UsageReported: i%2 == 0})
	}
	status := turn.StatusOK
	if rng.IntN(9) == 0 {
		status = turn.StatusUndelivered
	}
	return append(ps, turn.ReplyReady{Text: fmt.Sprintf("reply %d\x00 to %s", i, chat)}, turn.TurnCompleted{Status: status, DurationMs: 40})
}
