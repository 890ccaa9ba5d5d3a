package heartbeat_test

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/domain"
	heartbeatdom "github.com/omega-gateway/omega/domain/heartbeat"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/eventstore/sqlite"
	"github.com/omega-gateway/omega/handlers/duework"
	"github.com/omega-gateway/omega/handlers/heartbeat"
	"github.com/omega-gateway/omega/prompts"
)

type lastSet struct{ items []duework.Item }

func (c *lastSet) Set(it duework.Item) { c.items = append(c.items, it) }

// A wake-up long after its slot (a suspended laptop) is logged and
// re-aligned to the next boundary: no provider call, no burst. Outside
// active hours the clock sleeps straight to their start.
func TestHeartbeatSleepAndQuietHours(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "omega.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, _ := domain.NewEvents(domain.Metadata{}, heartbeatdom.HeartbeatItemAdded{Item: "NEEDSUSER stretch"})
	if _, err := s.Append(ctx, heartbeatdom.HeartbeatStream(heartbeatdom.GlobalHeartbeat), eventstore.Any, evs...); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	p, clock := &provider{}, &lastSet{}
	now := time.Date(2026, 1, 1, 10, 47, 0, 0, time.UTC)
	active, _ := heartbeatdom.ParseActiveHours("08:00-22:00")
	r, err := heartbeat.New(heartbeat.Config{
		Store: s, Registry: app.NewRegistry(), Provider: p, Markers: plainText, Channels: ownerChannels{}, Clock: clock, Target: owner,
		Context: noContext{}, Prompts: prompts.Defaults(), Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Interval: 30 * time.Minute, Active: active, Now: func() time.Time { return now },
	})
	if err != nil {
		t.Fatal(err)
	}
	slept := duework.Item{Kind: heartbeat.Kind, ID: heartbeatdom.GlobalHeartbeat, Due: time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)}
	if err := r.Handle(ctx, slept); err != nil {
		t.Fatal(err)
	}
	if p.calls.Load() != 0 || !strings.Contains(logs.String(), "system sleep detected") {
		t.Fatalf("calls %d, log:\n%s", p.calls.Load(), logs.String())
	}
	if got := clock.items[len(clock.items)-1].Due; !got.Equal(time.Date(2026, 1, 1, 11, 0, 0, 0, time.UTC)) {
		t.Fatalf("re-aligned to %s", got)
	}
	// The 22:00 slot is outside 08:00-22:00: from 21:30 the clock sleeps
	// straight to 08:00.
	now = time.Date(2026, 1, 1, 21, 30, 0, 0, time.UTC)
	if err := r.Handle(ctx, duework.Item{Kind: heartbeat.Kind, ID: heartbeatdom.GlobalHeartbeat, Due: now}); err != nil {
		t.Fatal(err)
	}
	if p.calls.Load() != 1 {
		t.Fatalf("the 21:30 slot made %d calls", p.calls.Load())
	}
	if got := clock.items[len(clock.items)-1].Due; !got.Equal(time.Date(2026, 1, 2, 8, 0, 0, 0, time.UTC)) {
		t.Fatalf("after active hours the clock wakes at %s", got)
	}
}

// With no channel to deliver an alert to, a slot makes no provider call
// and records nothing; the reason is logged once, not at every slot.
func TestHeartbeatWithoutTargetSkips(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "omega.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, _ := domain.NewEvents(domain.Metadata{}, heartbeatdom.HeartbeatItemAdded{Item: "NEEDSUSER stretch"})
	if _, err := s.Append(ctx, heartbeatdom.HeartbeatStream(heartbeatdom.GlobalHeartbeat), eventstore.Any, evs...); err != nil {
		t.Fatal(err)
	}
	for _, target := range []heartbeat.Target{{}, owner} {
		var logs bytes.Buffer
		p := &provider{}
		now := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
		r, err := heartbeat.New(heartbeat.Config{
			Store: s, Registry: app.NewRegistry(), Provider: p, Markers: plainText, Channels: noChannels{}, Clock: &lastSet{},
			Context: noContext{}, Prompts: prompts.Defaults(), Logger: slog.New(slog.NewTextHandler(&logs, nil)),
			Target: target, Interval: 30 * time.Minute, Now: func() time.Time { return now },
		})
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if err := r.Handle(ctx, duework.Item{Kind: heartbeat.Kind, ID: heartbeatdom.GlobalHeartbeat, Due: now}); err != nil {
				t.Fatal(err)
			}
			now = now.Add(30 * time.Minute)
		}
		if p.calls.Load() != 0 {
			t.Fatalf("target %q: %d provider calls", target, p.calls.Load())
		}
		if n := strings.Count(logs.String(), "check-ins are skipped"); n != 1 {
			t.Fatalf("target %q: the reason logged %d times:\n%s", target, n, logs.String())
		}
	}
}
