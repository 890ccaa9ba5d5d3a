package heartbeat_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain"
	heartbeatdom "github.com/omega-gateway/omega/domain/heartbeat"
	"github.com/omega-gateway/omega/domain/markers"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/eventstore/sqlite"
	"github.com/omega-gateway/omega/handlers/duework"
	"github.com/omega-gateway/omega/handlers/heartbeat"
	"github.com/omega-gateway/omega/prompts"
	"github.com/omega-gateway/omega/providers"
)

// counting is a store that counts the queries a cycle makes.
type counting struct {
	eventstore.Store
	queries atomic.Int64
}

func (c *counting) Load(ctx context.Context, s string, v int64) ([]domain.Event, error) {
	c.queries.Add(1)
	return c.Store.Load(ctx, s, v)
}

func (c *counting) Append(ctx context.Context, s string, e eventstore.ExpectedVersion, evs ...domain.NewEvent) (eventstore.AppendResult, error) {
	c.queries.Add(1)
	return c.Store.Append(ctx, s, e, evs...)
}

// provider answers like a model: groups for a classification, an alert
// for a group holding "NEEDSUSER", HEARTBEAT_OK otherwise.
type provider struct{ calls, bytes atomic.Int64 }

func (p *provider) Complete(_ context.Context, req providers.Request) (providers.Response, error) {
	p.calls.Add(1)
	p.bytes.Add(int64(len(req.System) + len(req.Prompt)))
	switch {
	case strings.Contains(req.Prompt, "Group these heartbeat"):
		return providers.Response{Text: "health: 1, 2, 3, 4, 5, 6\nsystems: 7, 8, 9, 10\nmoney: 11, 12"}, nil
	case strings.Contains(req.Prompt, "NEEDSUSER"):
		return providers.Response{Text: "Time to stretch."}, nil
	}
	return providers.Response{Text: "HEARTBEAT_OK"}, nil
}

type nopClock struct{}

func (nopClock) Set(duework.Item) {}

type noChannels struct{}

func (noChannels) Channel(string) (channels.Channel, bool) { return nil, false }

// ownerChannels runs the one channel the owner target names: a check-in
// is only run when its alert can be delivered.
type ownerChannels struct{}

var owner = heartbeat.Target{Channel: "owner", Chat: "1"}

func (ownerChannels) Channel(name string) (channels.Channel, bool) {
	return discard{}, name == owner.Channel
}

// discard is a channel that accepts every message and shows none.
type discard struct{}

func (discard) Name() string                                        { return owner.Channel }
func (discard) Start(ctx context.Context, _ channels.Deliver) error { <-ctx.Done(); return nil }
func (discard) SendText(context.Context, string, string) (channels.SendResult, error) {
	return channels.SendResult{Chunks: 1}, nil
}
func (discard) SendTyping(context.Context, string) error                             { return nil }
func (discard) SendPhoto(context.Context, string, channels.Attachment, string) error { return nil }
func (discard) Stop(context.Context) error                                           { return nil }

type noContext struct{}

func (noContext) Enrichment(context.Context, heartbeat.Target, string) (string, error) {
	return "Known facts about the user:\n- name: Ana\n", nil
}
func (noContext) System(string) string {
	return strings.Join([]string{prompts.Defaults().Section("Identity"), prompts.Defaults().Section("Soul"), prompts.Defaults().Section("System")}, "\n\n")
}
func (noContext) Deactivated(context.Context, heartbeat.Target, string) (bool, error) {
	return false, nil
}

func plainText(_ context.Context, _ *turn.Turn, raw string) (string, []markers.AppliedMarker, error) {
	return raw, nil, nil
}

// BenchmarkHeartbeatCycle runs one slot per iteration on SQLite and
// reports provider calls, prompt bytes (system + prompt) and store
// queries per cycle. The idle case (empty checklist) is what a heartbeat
// costs per slot when there is nothing to check: at the default 30 min,
// two slots an hour.
//
//	go test -run '^$' -bench HeartbeatCycle -benchtime 200x ./heartbeat/
func BenchmarkHeartbeatCycle(b *testing.B) {
	for _, c := range []struct {
		name  string
		items int
	}{{"empty", 0}, {"all-ok-3", 3}, {"grouped-12", 12}} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "omega.db"), sqlite.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			store := &counting{Store: s}
			reg := app.NewRegistry()
			var ps []domain.Payload
			for i := range c.items {
				item := fmt.Sprintf("Check item %d", i+1)
				if c.items == 12 && i == 2 {
					item = "NEEDSUSER stretch"
				}
				ps = append(ps, heartbeatdom.HeartbeatItemAdded{Item: item})
			}
			if len(ps) > 0 {
				evs, _ := domain.NewEvents(domain.Metadata{}, ps...)
				if _, err := s.Append(ctx, heartbeatdom.HeartbeatStream(heartbeatdom.GlobalHeartbeat), eventstore.Any, evs...); err != nil {
					b.Fatal(err)
				}
			}
			p := &provider{}
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			r, err := heartbeat.New(heartbeat.Config{
				Store: store, Registry: reg, Provider: p, Markers: plainText, Channels: ownerChannels{}, Clock: nopClock{}, Target: owner,
				Context: noContext{}, Prompts: prompts.Defaults(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
				Interval: 30 * time.Minute, Now: func() time.Time { return now },
			})
			if err != nil {
				b.Fatal(err)
			}
			store.queries.Store(0)
			b.ResetTimer()
			for range b.N {
				if err := r.Handle(ctx, duework.Item{Kind: heartbeat.Kind, ID: heartbeatdom.GlobalHeartbeat, Due: now}); err != nil {
					b.Fatal(err)
				}
				now = now.Add(30 * time.Minute)
			}
			b.ReportMetric(float64(p.calls.Load())/float64(b.N), "calls/cycle")
			b.ReportMetric(float64(p.bytes.Load())/float64(b.N), "prompt-bytes/cycle")
			b.ReportMetric(float64(store.queries.Load())/float64(b.N), "queries/cycle")
		})
	}
}
