package messaging_test

import (
	"context"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/eventstore/messaging"
	"github.com/omega-gateway/omega/eventstore/postgres"
	"github.com/omega-gateway/omega/handlers/senders"
	"github.com/omega-gateway/omega/internal/pgtest"
)

// A command published on PostgreSQL reaches a subscriber in another
// process through LISTEN/NOTIFY, long before the subscriber's next poll
// (set to a minute here, so that only the announcement can deliver it in
// time).
func TestCommandsWakeIdleSubscribersOnPostgres(t *testing.T) {
	dsn := pgtest.DSN(t)
	open := func() *postgres.Store {
		s, err := postgres.Open(context.Background(), dsn, postgres.Options{Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	handling, sending := open(), open()
	reg := registry()
	bus := func(s *postgres.Store) *messaging.Buses {
		b, err := messaging.New(messaging.Options{Backend: s.Backend(), DB: s.DB(), Log: s, Registry: reg, Logger: quiet,
			Announcer: s, CommandPoll: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = b.Close() })
		return b
	}
	consumer, producer := bus(handling), bus(sending)
	profiles := senders.MustNew(handling, reg)
	if err := consumer.AddCommandHandlers(context.Background(), profiles.CommandHandlers()...); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = consumer.Router.Run(ctx) }()
	<-consumer.Router.Running()
	// Let the subscriber run its first, empty query and fall idle.
	time.Sleep(500 * time.Millisecond)

	if err := producer.CommandBus.Send(ctx, &senders.RecordFact{Channel: "telegram", SenderID: "7", Key: "city", Value: "Porto"}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		evs, err := handling.Load(ctx, sender.SenderStream("telegram", "7"), 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) > 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the command was not handled within 20 s; its subscriber polls only once a minute")
}

// A command subscriber waiting out its idle poll stops with the router at
// once, not when the poll is due (a minute here, past the router's
// ten-second close timeout), whether the router is closed or its context
// ends (as omega serve stops it).
func TestIdleCommandSubscriberStopsAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		stop func(*messaging.Buses, context.CancelFunc) error
	}{
		{"router closed", func(b *messaging.Buses, _ context.CancelFunc) error { return b.Router.Close() }},
		{"context ended", func(_ *messaging.Buses, cancel context.CancelFunc) error { cancel(); return nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := idleCommandBus(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ran := make(chan error, 1)
			go func() { ran <- b.Router.Run(ctx) }()
			<-b.Router.Running()
			time.Sleep(500 * time.Millisecond) // every subscriber queried and fell idle

			stopped := time.Now()
			if err := tc.stop(b, cancel); err != nil {
				t.Fatalf("the router stopped with %v after %s", err, time.Since(stopped).Round(time.Millisecond))
			}
			select {
			case err := <-ran:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("the router did not stop within 20 s")
			}
			if took := time.Since(stopped); took > 5*time.Second {
				t.Fatalf("the router took %s to stop; its idle subscribers waited for their next poll", took.Round(time.Millisecond))
			}
		})
	}
}

// idleCommandBus is a PostgreSQL command bus with handlers whose
// subscribers poll once a minute.
func idleCommandBus(t *testing.T) *messaging.Buses {
	t.Helper()
	s, err := postgres.Open(context.Background(), pgtest.DSN(t), postgres.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	reg := registry()
	b, err := messaging.New(messaging.Options{Backend: s.Backend(), DB: s.DB(), Log: s, Registry: reg, Logger: quiet,
		Announcer: s, CommandPoll: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	if err := b.AddCommandHandlers(context.Background(), senders.MustNew(s, reg).CommandHandlers()...); err != nil {
		t.Fatal(err)
	}
	return b
}
