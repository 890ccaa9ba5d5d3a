package projections_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/eventstore/postgres"
	"github.com/omega-gateway/omega/eventstore/sqlite"
	"github.com/omega-gateway/omega/internal/pgtest"
	"github.com/omega-gateway/omega/projections"
	"github.com/omega-gateway/omega/projections/engine"
	"github.com/omega-gateway/omega/projections/facts"
	"github.com/omega-gateway/omega/projections/projectionstest"
	"github.com/omega-gateway/omega/projections/readmodel"
	"github.com/omega-gateway/omega/projections/reports"
	"github.com/omega-gateway/omega/projections/tasks"
)

// applyTurnsCount is how many turns BenchmarkApplyTurns replays, spread
// over applyTurnsChats chats.
const (
	applyTurnsCount = 2000
	applyTurnsChats = 50
)

// BenchmarkApplyTurns measures how many turns a second the read models a
// chat's next turn waits for (those applied with the turns model, in one
// lane) can take in: the rate of the one process applying them bounds a
// cluster's turns per second. Each turn is the ten events an answered
// message records, replayed in batches of a given number of events.
func BenchmarkApplyTurns(b *testing.B) {
	opens := []struct {
		name    string
		dialect readmodel.Dialect
		open    func(b *testing.B) projectionstest.Store
	}{
		{"sqlite", readmodel.SQLite, func(b *testing.B) projectionstest.Store {
			s, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "omega.db"), sqlite.Options{Logger: projectionstest.Quiet})
			if err != nil {
				b.Fatal(err)
			}
			return s
		}},
		{"postgres", readmodel.Postgres, func(b *testing.B) projectionstest.Store {
			s, err := postgres.Open(context.Background(), pgtest.DSN(b), postgres.Options{Logger: projectionstest.Quiet})
			if err != nil {
				b.Fatal(err)
			}
			return s
		}},
	}
	for _, o := range opens {
		b.Run(o.name, func(b *testing.B) {
			ctx := context.Background()
			s := o.open(b)
			b.Cleanup(func() { s.Close() })
			seedTurns(b, ctx, s, applyTurnsCount)
			eng := engine.New(s.DB(), s, o.dialect, newRegistry(), projectionstest.Quiet,
				facts.ReadModel{}, projections.Turns{}, projections.Sessions{}, tasks.ReadModel{},
				projections.Summaries{}, reports.ReadModel{})
			if err := eng.Setup(ctx); err != nil {
				b.Fatal(err)
			}
			// A live applier's batches are what committed since its last
			// one: a few turns when it keeps up, more as it falls behind.
			for _, size := range []int{20, 100, 1000} {
				b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) {
					eng.BatchSize = size
					for b.Loop() {
						start := time.Now()
						if err := eng.Rebuild(ctx, eng.Projections(), nil); err != nil {
							b.Fatal(err)
						}
						b.ReportMetric(applyTurnsCount/time.Since(start).Seconds(), "turns/s")
					}
				})
			}
			var completed int
			if err := s.DB().QueryRow("SELECT count(*) FROM turns WHERE status = 'ok'").Scan(&completed); err != nil {
				b.Fatal(err)
			}
			if completed != applyTurnsCount {
				b.Fatalf("%d turns completed after the replay, want %d", completed, applyTurnsCount)
			}
		})
	}
}

// seedTurns appends n answered turns, in the appends a turn makes.
func seedTurns(b *testing.B, ctx context.Context, s eventstore.Store, n int) {
	b.Helper()
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	for i := range n {
		chat := fmt.Sprintf("%d", 1000+i%applyTurnsChats)
		conv := fmt.Sprintf("conv-%s", chat)
		md := domain.Metadata{Channel: "http", Sender: chat}
		text := fmt.Sprintf("message %d: what is on my list for today?", i)
		reply := fmt.Sprintf("reply %d: three things, the first of which is a call at ten.", i)
		steps := [][]domain.Payload{
			{turn.MessageReceived{Channel: "http", SenderID: chat, ChatID: chat, Text: text, ReceivedAt: at}},
			{turn.AccessGranted{Reason: "owner"}},
			{turn.ContextBuilt{ConversationID: conv, Language: "en", Model: "pong", SectionsUsed: []string{"identity"}}},
			{turn.RouteDecided{Direct: true, Model: "pong", Prefilter: true}, turn.ProviderCalled{Provider: "openai", Model: "pong", Attempt: 1}},
			{turn.ProviderReplied{Provider: "openai", Model: "pong", Text: reply, DurationMs: 3, PromptBytes: 900, ReplyBytes: len(reply)},
				turn.ReplyStreamStarted{}, turn.ReplyReady{Text: reply}},
			{turn.ReplySent{Kind: "reply", Text: reply, Chunks: 1}, turn.TurnCompleted{Status: "ok", DurationMs: 5}},
		}
		stream := domain.TurnStream(uuid.NewString())
		var version int64
		for _, ps := range steps {
			evs, err := domain.NewEvents(md, ps...)
			if err != nil {
				b.Fatal(err)
			}
			res, err := s.Append(ctx, stream, eventstore.Exact(version), evs...)
			if err != nil {
				b.Fatal(err)
			}
			version = res.ToVersion
		}
	}
}
