package messaging_test

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/components/cqrs"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/events"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/system"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/eventstore/messaging"
	"github.com/omega-gateway/omega/eventstore/postgres"
	"github.com/omega-gateway/omega/eventstore/sqlite"
	"github.com/omega-gateway/omega/handlers/senders"
	"github.com/omega-gateway/omega/internal/pgtest"
)

type store interface {
	messaging.Log
	DB() *sql.DB
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func stores(t *testing.T) map[string]func(t *testing.T) store {
	return map[string]func(t *testing.T) store{
		"sqlite": func(t *testing.T) store {
			s, err := sqlite.Open(context.Background(), t.TempDir()+"/omega.db", sqlite.Options{Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
		"postgres": func(t *testing.T) store {
			s, err := postgres.Open(context.Background(), pgtest.DSN(t), postgres.Options{Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
	}
}

// processes returns a function that opens another store on one fresh
// PostgreSQL schema: each is one omega process.
func processes(t *testing.T) func() store {
	dsn := pgtest.DSN(t)
	return func() store {
		s, err := postgres.Open(context.Background(), dsn, postgres.Options{Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
}

func registry() *domain.Registry {
	r := events.NewRegistry()
	return r
}

func TestBuses(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			reg := registry()
			b, err := messaging.New(messaging.Options{Backend: s.Backend(), DB: s.DB(), Log: s, Registry: reg, Logger: quiet, MaxRetries: 2, InitialInterval: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()

			profiles := senders.MustNew(s, reg)
			if err := b.AddCommandHandlers(context.Background(), profiles.CommandHandlers()...); err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var seen []string
			attempts := 0
			err = b.Events.AddHandlersGroup("facts-seen",
				cqrs.NewGroupEventHandler(func(ctx context.Context, e *sender.FactRecorded) error {
					if e.Key == "poison" {
						mu.Lock()
						attempts++
						mu.Unlock()
						return errors.New("cannot handle this one")
					}
					mu.Lock()
					seen = append(seen, e.Key+"="+e.Value)
					mu.Unlock()
					return nil
				}),
			)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go b.Router.Run(ctx)
			<-b.Router.Running()

			for _, kv := range [][2]string{{"city", "Lisbon"}, {"poison", "x"}, {"food", "pasta"}} {
				if err := b.CommandBus.Send(ctx, &senders.RecordFact{Channel: "telegram", SenderID: "1", Key: kv[0], Value: kv[1]}); err != nil {
					t.Fatal(err)
				}
			}
			deadline := time.Now().Add(30 * time.Second)
			for {
				mu.Lock()
				n := len(seen)
				mu.Unlock()
				if n == 2 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("handler saw %v", seen)
				}
				time.Sleep(10 * time.Millisecond)
			}
			// Events after the poisoned one still arrive, in order.
			if seen[0] != "city=Lisbon" || seen[1] != "food=pasta" {
				t.Fatalf("handler saw %v", seen)
			}
			if attempts != 3 {
				t.Fatalf("poisoned event attempted %d times, want 1 + 2 retries", attempts)
			}
			var poisoned []domain.Event
			for time.Now().Before(deadline) {
				poisoned, err = s.Load(ctx, system.PoisonStream("facts-seen"), 1)
				if err != nil {
					t.Fatal(err)
				}
				if len(poisoned) > 0 {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			if len(poisoned) != 1 {
				t.Fatalf("poison stream holds %d events", len(poisoned))
			}
			p, err := reg.Decode(poisoned[0])
			if err != nil {
				t.Fatal(err)
			}
			mp := p.(system.MessagePoisoned)
			if mp.Name != "FactRecorded" || mp.Reason == "" || mp.Handler != "facts-seen" {
				t.Fatalf("poison record = %+v", mp)
			}
			pos, err := s.Checkpoint(ctx, "group:facts-seen")
			if err != nil || pos == 0 {
				t.Fatalf("consumer checkpoint = %d, %v", pos, err)
			}
		})
	}
}

// A consumer that restarts continues after its checkpoint: nothing is
// delivered twice, nothing is skipped.
func TestStoreSubscriberResumes(t *testing.T) {
	s := stores(t)["sqlite"](t)
	ctx := context.Background()
	appendN := func(n int) {
		for i := 0; i < n; i++ {
			evs, _ := domain.NewEvents(domain.Metadata{}, sender.FactRecorded{Key: "k", Value: "v"})
			if _, err := s.Append(ctx, "sender-t-1", eventstore.Any, evs...); err != nil {
				t.Fatal(err)
			}
		}
	}
	appendN(5)
	read := func(n int) []string {
		sub := messaging.NewStoreSubscriber(s, registry(), quiet)
		cctx, cancel := context.WithCancel(ctx)
		ch, err := sub.Subscribe(cctx, "c")
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for len(ids) < n {
			select {
			case m := <-ch:
				ids = append(ids, m.Metadata.Get(messaging.MetaPosition))
				m.Ack()
			case <-time.After(5 * time.Second):
				t.Fatalf("got %v, want %d messages", ids, n)
			}
		}
		// Let the last ack's checkpoint land before stopping.
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			if p, _ := s.Checkpoint(ctx, "c"); p > 0 && ids[len(ids)-1] == itoa(p) {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
		sub.Close()
		return ids
	}
	first := read(5)
	appendN(3)
	second := read(3)
	if first[0] != "1" || first[4] != "5" || second[0] != "6" || second[2] != "8" {
		t.Fatalf("first %v, second %v", first, second)
	}
}

func itoa(n int64) string {
	const digits = "0123456789"
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{digits[n%10]}, b...)
	}
	return string(b)
}
