package app_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/app/config"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/task"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/handlers/asof"
	"github.com/omega-gateway/omega/internal/pgtest"
)

// Size of the long history BenchmarkStateAt answers for: one sender's
// turns in conversations of ten, facts recorded and changed, and tasks
// scheduled and cancelled.
const (
	benchHistoryTurns = 5000
	benchHistoryFacts = 2000
	benchHistoryTasks = 500
)

func mustAppend(b *testing.B, s eventstore.Store, stream string, md domain.Metadata, ps ...domain.Payload) {
	b.Helper()
	evs, err := domain.NewEvents(md, ps...)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.Append(context.Background(), stream, eventstore.Any, evs...); err != nil {
		b.Fatal(err)
	}
}

// seedHistory writes the long history and returns the moment halfway.
func seedHistory(b *testing.B, a *app.App) time.Time {
	ctx := context.Background()
	md := domain.Metadata{Channel: "http", Sender: "alice"}
	profile := sender.SenderStream("http", "alice")
	mustAppend(b, a.Store, profile, md, sender.Welcomed{Language: "English"})
	var middle time.Time
	conv := ""
	for i := range benchHistoryTurns {
		id := uuid.NewString()
		if i%10 == 0 {
			conv = id
		}
		tmd := md
		tmd.CorrelationID = id
		mustAppend(b, a.Store, domain.TurnStream(id), tmd,
			turn.MessageReceived{Channel: "http", SenderID: "alice", ChatID: "alice", Text: fmt.Sprintf("message %d", i), ReceivedAt: time.Now()},
			turn.ContextBuilt{ConversationID: conv, Language: "English", Model: "m"},
			turn.ReplyReady{Text: fmt.Sprintf("reply %d", i)}, turn.TurnCompleted{Status: "ok"})
		if i < benchHistoryFacts {
			mustAppend(b, a.Store, profile, md, sender.FactRecorded{Key: fmt.Sprintf("fact_%d", i%100), Value: fmt.Sprintf("value %d", i)})
		}
		if i < benchHistoryTasks {
			tid := uuid.NewString()
			mustAppend(b, a.Store, task.TaskStream(tid), md,
				task.TaskScheduled{ID: tid, Description: "task", Due: time.Now().Add(time.Hour), Repeat: "once", Kind: task.TaskKindReminder,
					Channel: "http", SenderID: "alice", ChatID: "alice"},
				task.TaskCancelled{ID: tid})
		}
		if i == benchHistoryTurns/2 {
			middle = time.Now()
		}
	}
	if err := a.Engine.Setup(ctx); err != nil {
		b.Fatal(err)
	}
	if err := a.Engine.CatchUp(ctx); err != nil {
		b.Fatal(err)
	}
	return middle
}

// BenchmarkStateAt is omega state's fold for a sender with a long
// history (5,000 turns, 2,000 fact changes, 500 tasks), now and halfway
// back, without snapshots.
func BenchmarkStateAt(b *testing.B) {
	for _, backend := range []string{"sqlite", "postgres"} {
		b.Run(backend, func(b *testing.B) {
			vars := map[string]string{"OMEGA_DATA_DIR": b.TempDir()}
			if backend == "postgres" {
				vars["OMEGA_DATABASE_URL"] = pgtest.DSN(b)
			}
			cfg, err := config.LoadFrom(vars)
			if err != nil {
				b.Fatal(err)
			}
			a, err := app.Open(context.Background(), cfg, quiet, app.OpenOptions{})
			if err != nil {
				b.Fatal(err)
			}
			defer a.Close()
			middle := seedHistory(b, a)
			states, err := a.States()
			if err != nil {
				b.Fatal(err)
			}
			who := sender.SenderRef{Channel: "http", ID: "alice"}
			for _, m := range []struct {
				name string
				at   time.Time
			}{{"now", time.Now()}, {"halfway", middle}} {
				b.Run(m.name, func(b *testing.B) {
					for b.Loop() {
						st, err := states.At(context.Background(), who, asof.Moment{At: m.at})
						if err != nil || len(st.Facts) != 100 || st.Conversation == nil {
							b.Fatalf("state: %v %+v", err, st)
						}
					}
				})
			}
		})
	}
}
