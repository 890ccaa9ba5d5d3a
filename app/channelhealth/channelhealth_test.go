package channelhealth

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/eventstore"
)

// watchDoubles record what the channel watch appends and alerts, and
// hold its timers so the test fires them.
type watchDoubles struct {
	mu     sync.Mutex
	types  []string
	alerts []string
	timers []func()
}

func (d *watchDoubles) Append(_ context.Context, stream string, _ eventstore.ExpectedVersion, evs ...domain.NewEvent) (eventstore.AppendResult, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, e := range evs {
		d.types = append(d.types, stream+" "+e.Type)
	}
	return eventstore.AppendResult{}, nil
}

func (d *watchDoubles) Alert(_ context.Context, text string) (string, string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.alerts = append(d.alerts, text)
	return "telegram", "42", nil
}

func newTestWatch(t *testing.T, d *watchDoubles) *Watch {
	t.Helper()
	w, err := New(d, d, 5*time.Minute, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	w.after = func(_ time.Duration, f func()) func() bool {
		d.timers = append(d.timers, f)
		return func() bool { return true }
	}
	return w
}

// A blip shorter than the alert threshold is recorded and alerts nobody,
// even when its timer fires late; an outage that lasts alerts once and
// tells the owner when it ends.
func TestChannelWatchAlertsOnlyOnALastingOutage(t *testing.T) {
	d := &watchDoubles{}
	w := newTestWatch(t, d)
	w.report(channels.Health{Channel: "telegram", State: channels.HealthDown, Err: "502", Failures: 1})
	if got := w.Unhealthy(); !slices.Equal(got, []string{"telegram: down"}) {
		t.Fatalf("unhealthy = %v", got)
	}
	w.report(channels.Health{Channel: "telegram", State: channels.HealthUp, Failures: 2})
	d.timers[0]() // fires after the recovery
	if len(d.alerts) != 0 || len(w.Unhealthy()) != 0 {
		t.Fatalf("alerts %q, unhealthy %v after a blip", d.alerts, w.Unhealthy())
	}

	w.report(channels.Health{Channel: "telegram", State: channels.HealthStalled, Err: "stalled", Failures: 1})
	w.report(channels.Health{Channel: "telegram", State: channels.HealthDown, Err: "502", Failures: 2})
	if len(d.timers) != 2 {
		t.Fatalf("%d timers: one per outage, not per change", len(d.timers))
	}
	d.timers[1]()
	d.timers[1]()
	w.report(channels.Health{Channel: "telegram", State: channels.HealthUp, Failures: 3})
	if len(d.alerts) != 2 {
		t.Fatalf("alerts %q, want one about the outage and one about its end", d.alerts)
	}
	want := []string{
		"channel-telegram ChannelDown", "channel-telegram ChannelRecovered",
		"channel-telegram ChannelStalled", "channel-telegram ChannelDown", "channel-telegram OwnerAlerted",
		"channel-telegram ChannelRecovered", "channel-telegram OwnerAlerted",
	}
	if !slices.Equal(d.types, want) {
		t.Fatalf("recorded %q\nwant     %q", d.types, want)
	}
}
