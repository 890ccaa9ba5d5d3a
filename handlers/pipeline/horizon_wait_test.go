package pipeline_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/omega-gateway/omega/eventstore"
)

// A turn whose message is behind the PostgreSQL horizon (an older
// transaction still open) waits for the shared reader to read that
// message: its worker does not look at the chat's queue again at every
// read of the log, nor every 50 ms, meanwhile. With a thousand messages
// waiting, those looks made a turn cost in proportion to the messages
// waiting.
func TestTurnBehindTheHorizonWaitsForItsMessage(t *testing.T) {
	b := storeBackends()[1]
	store, db, dialect := b.open(t, b.dsn(t))
	p := newPipeline(t, store, db, dialect)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	engineDone := background(ctx, p.engine.Run)
	schedDone := background(ctx, p.scheduler.Run)
	answerInRow(t, p, "first")
	// The read models' applier makes the shared reader follow the log.
	tail := store.(interface{ Tail() *eventstore.Tail }).Tail()
	eventually(t, "the shared reader following the log", tail.Following)

	older, id := messageBehindTheHorizon(ctx, t, p, db, "second")
	time.Sleep(100 * time.Millisecond)
	looked := p.scheduler.Looks()
	time.Sleep(400 * time.Millisecond)
	if p.completed(t, id) {
		t.Fatal("the turn ran before its place in the log could be read")
	}
	if n := p.scheduler.Looks() - looked; n > 1 {
		t.Errorf("the worker looked at its queue %d times in 400 ms while its message was behind the horizon, want at most 1", n)
	}
	if err := older.Rollback(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the turn, once the older transaction ended", func() bool { return p.completed(t, id) })
	cancel()
	<-schedDone
	<-engineDone
}

// messageBehindTheHorizon opens a transaction holding a transaction id,
// then receives a message and kicks the scheduler for it: the message
// cannot be read from the log before older ends.
func messageBehindTheHorizon(ctx context.Context, t *testing.T, p *rig, db *sql.DB, text string) (older *sql.Tx, id string) {
	t.Helper()
	older, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := older.Exec("SELECT pg_current_xact_id()"); err != nil {
		t.Fatal(err)
	}
	id = uuid.NewString()
	p.receive(t, id, text)
	p.scheduler.Kick(chanName+"-"+senderID, id)
	return older, id
}
