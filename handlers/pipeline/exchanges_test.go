package pipeline_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/handlers/pipeline"
	"github.com/omega-gateway/omega/providers"
)

// A chat's next turn does not wait for the read models to show the turn
// this process ran before it: its context adds that turn's exchange to
// what they show. With the read models stopped, three messages in a row
// are answered, each with the exchanges before it in its history; a
// command, which reads the read models as they stand, waits for them.
func TestNextTurnRunsBeforeTheReadModelsShowTheLast(t *testing.T) {
	for _, b := range storeBackends() {
		t.Run(b.name, func(t *testing.T) {
			p, db, ctx, cancel := stoppedReadModels(t, b, func(_ context.Context, _ int, req providers.Request) (providers.Response, error) {
				return providers.Response{Text: "re: " + req.Prompt}, nil
			})
			defer cancel()
			p.driver.Commands = slashCommands{}
			schedDone := background(ctx, p.scheduler.Run)
			ids := answerInRow(t, p, "first", "second", "third")
			if appliedCompletion(t, db, ids[0]) {
				t.Fatal("the read models ran: the test shows nothing")
			}
			if n := p.awaits.Load(); n != 0 {
				t.Errorf("the turns waited %d times for the read models, want none", n)
			}
			reqs := p.provider.requests()
			if len(reqs) != 3 {
				t.Fatalf("%d provider calls, want 3", len(reqs))
			}
			var history []string
			for _, m := range reqs[2].History {
				history = append(history, m.Role+": "+m.Content)
			}
			want := "user: first|assistant: re: first|user: second|assistant: re: second"
			if got := strings.Join(history, "|"); got != want {
				t.Errorf("the third turn's history is %q, want %q", got, want)
			}
			if c1, c3 := conversationOf(t, p, ids[0]), conversationOf(t, p, ids[2]); c1 != c3 {
				t.Errorf("the third turn is in conversation %s, the first in %s", c3, c1)
			}

			cmd := uuid.NewString()
			p.receive(t, cmd, "/status")
			p.scheduler.Kick(chanName+"-"+senderID, cmd)
			time.Sleep(300 * time.Millisecond)
			if p.completed(t, cmd) {
				t.Fatal("the command ran before the read models showed the turns before it")
			}
			if p.awaits.Load() == 0 {
				t.Error("the command waits without telling the read models' applier")
			}
			engineDone := background(ctx, p.engine.Run)
			eventually(t, "the command, once the read models run", func() bool { return p.completed(t, cmd) })
			cancel()
			<-schedDone
			<-engineDone
		})
	}
}

// A turn waiting for its message's place in the log (on PostgreSQL an
// older transaction still running hides it) waits for the log, not for
// the read models: it does not make the process's applier read other
// processes' events at once. With the read models stopped, a message
// received while another transaction holds the horizon back runs only
// once that transaction ends, and nothing awaited the read models.
func TestMessageBehindTheHorizonDoesNotAwaitTheReadModels(t *testing.T) {
	b := storeBackends()[1]
	p, db, ctx, cancel := stoppedReadModels(t, b, func(_ context.Context, _ int, req providers.Request) (providers.Response, error) {
		return providers.Response{Text: "re: " + req.Prompt}, nil
	})
	defer cancel()
	schedDone := background(ctx, p.scheduler.Run)
	older, id := messageBehindTheHorizon(ctx, t, p, db, "first")
	time.Sleep(300 * time.Millisecond)
	if p.completed(t, id) {
		t.Fatal("the turn ran before its place in the log could be read")
	}
	if err := older.Rollback(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the turn, once the older transaction ended", func() bool { return p.completed(t, id) })
	if n := p.awaits.Load(); n != 0 {
		t.Errorf("the turn waited %d times for the read models, want none", n)
	}
	cancel()
	<-schedDone
}

// A provider session a turn records in the sender's profile holds the
// chat's next turn back no more than its exchange: the profile is read
// from the log. With the read models stopped and a new session every
// call, three messages in a row are answered, each resuming the last.
func TestNewSessionDoesNotHoldTheNextTurnBack(t *testing.T) {
	for _, b := range storeBackends() {
		t.Run(b.name, func(t *testing.T) {
			p, _, ctx, cancel := stoppedReadModels(t, b, func(_ context.Context, call int, req providers.Request) (providers.Response, error) {
				return providers.Response{Text: "re: " + req.Prompt, SessionID: fmt.Sprint("s-", call)}, nil
			})
			defer cancel()
			schedDone := background(ctx, p.scheduler.Run)
			answerInRow(t, p, "first", "second", "third")
			reqs := p.provider.requests()
			if len(reqs) != 3 || reqs[2].SessionID != "s-2" {
				t.Fatalf("%d provider calls, the last resuming %q; want 3, resuming s-2", len(reqs), reqs[len(reqs)-1].SessionID)
			}
			cancel()
			<-schedDone
		})
	}
}

// stoppedReadModels is a pipeline on backend b whose provider answers
// with reply and whose read models have applied the set-up (the sender's
// welcome) and then stop: the engine does not run.
func stoppedReadModels(t *testing.T, b storeBackend, reply func(context.Context, int, providers.Request) (providers.Response, error)) (*rig, *sql.DB, context.Context, context.CancelFunc) {
	t.Helper()
	store, db, dialect := b.open(t, b.dsn(t))
	p := newPipeline(t, store, db, dialect)
	p.provider.reply = reply
	ctx, cancel := context.WithCancel(context.Background())
	if err := p.engine.CatchUp(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	return p, db, ctx, cancel
}

// answerInRow sends texts from the rig's sender, each once the turn
// before it has completed, and returns their turns.
func answerInRow(t *testing.T, p *rig, texts ...string) []string {
	t.Helper()
	var ids []string
	for _, text := range texts {
		id := uuid.NewString()
		ids = append(ids, id)
		p.receive(t, id, text)
		p.scheduler.Kick(chanName+"-"+senderID, id)
		eventually(t, "the "+text+" turn, with the read models stopped", func() bool { return p.completed(t, id) })
	}
	return ids
}

// slashCommands answers any message that starts with a slash.
type slashCommands struct{}

func (slashCommands) IsCommand(text string) bool { return strings.HasPrefix(text, "/") }

func (slashCommands) Answer(context.Context, *turn.Turn, sender.SenderProfile) (pipeline.CommandAnswer, error) {
	return pipeline.CommandAnswer{Command: "status", Reply: "all well"}, nil
}
