package messaging_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/components/cqrs"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/system"
	"github.com/omega-gateway/omega/eventstore/messaging"
	"github.com/omega-gateway/omega/handlers/senders"
)

// flaky is a command whose handler always fails with a retryable error.
type flaky struct{ N int }

func (flaky) CommandName() string { return "Flaky" }

// startBuses runs a router with the sender commands and the flaky one.
func startBuses(t *testing.T, s store, reg *domain.Registry) *messaging.Buses {
	t.Helper()
	announcer, _ := any(s).(messaging.Announcer)
	b, err := messaging.New(messaging.Options{Backend: s.Backend(), DB: s.DB(), Log: s, Registry: reg, Logger: quiet,
		Announcer: announcer, MaxRetries: 1, InitialInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	profiles := senders.MustNew(s, reg)
	hs := append(profiles.CommandHandlers(), cqrs.NewCommandHandler("Flaky", func(context.Context, *flaky) error {
		return errors.New("flaky is down")
	}))
	if err := b.AddCommandHandlers(context.Background(), hs...); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = b.Router.Run(ctx) }()
	<-b.Router.Running()
	t.Cleanup(func() { cancel(); <-done; b.Close() })
	return b
}

func outcome(t *testing.T, s store, reg *domain.Registry, id string) domain.Payload {
	t.Helper()
	evs, err := s.Load(context.Background(), system.CommandStream(id), 0)
	if err != nil || len(evs) != 1 {
		t.Fatalf("command %s stream: %d events, %v", id, len(evs), err)
	}
	p, err := reg.Decode(evs[0])
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A command sent with an id has its outcome in the log: handled, rejected
// by its decision at once, or failed after its retries (poison queue).
func TestCommandOutcomes(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			s, reg := open(t), registry()
			b := startBuses(t, s, reg)
			ctx := context.Background()

			id, err := b.Send(ctx, &senders.RecordFact{Channel: "telegram", SenderID: "42", Key: "city", Value: "Lima"})
			if err != nil {
				t.Fatal(err)
			}
			if err := messaging.Wait(ctx, s, reg, id, 10*time.Second); err != nil {
				t.Fatalf("wait handled: %v", err)
			}
			if got, ok := outcome(t, s, reg, id).(system.CommandHandled); !ok || got.Name != "RecordFact" || got.CommandID != id {
				t.Fatalf("outcome %+v", got)
			}
			profile, err := senders.MustNew(s, reg).Load(ctx, "telegram", "42")
			if err != nil || profile.Facts["city"] != "Lima" {
				t.Fatalf("facts %v, %v", profile.Facts, err)
			}

			id, err = b.Send(ctx, &senders.RecordFact{Channel: "telegram", SenderID: "42", Key: "", Value: "x"})
			if err != nil {
				t.Fatal(err)
			}
			var failed *messaging.CommandError
			if err := messaging.Wait(ctx, s, reg, id, 10*time.Second); !errors.As(err, &failed) || !strings.Contains(failed.Reason, "empty") {
				t.Fatalf("wait rejected = %v", err)
			}

			id, err = b.Send(ctx, &flaky{N: 1})
			if err != nil {
				t.Fatal(err)
			}
			if err := messaging.Wait(ctx, s, reg, id, 10*time.Second); !errors.As(err, &failed) || failed.Name != "Flaky" ||
				!strings.Contains(failed.Reason, "flaky is down") {
				t.Fatalf("wait poisoned = %v", err)
			}
		})
	}
}

// On PostgreSQL a command sent by a process without handlers is handled
// by another process's router, and the sender's Wait sees the outcome.
func TestCommandHandledByAnotherProcess(t *testing.T) {
	open := processes(t)
	server, sender, reg := open(), open(), registry()
	startBuses(t, server, reg)

	b, err := messaging.New(messaging.Options{Backend: sender.Backend(), DB: sender.DB(), Log: sender, Registry: reg, Logger: quiet, Announcer: sender.(messaging.Announcer)})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	id, err := b.Send(ctx, &senders.PurgeFacts{Channel: "telegram", SenderID: "42"})
	if err != nil {
		t.Fatal(err)
	}
	if err := messaging.Wait(ctx, sender, reg, id, 10*time.Second); err != nil {
		t.Fatalf("wait: %v", err)
	}
	if _, ok := outcome(t, sender, reg, id).(system.CommandHandled); !ok {
		t.Fatal("no CommandHandled")
	}
}
