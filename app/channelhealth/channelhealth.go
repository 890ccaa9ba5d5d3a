// Package channelhealth follows the health the channels report: it records
// each change as an event, answers /readyz, and alerts the owner about an
// outage that lasts.
package channelhealth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/system"
	"github.com/omega-gateway/omega/eventstore"
)

// OwnerAlerter sends omega's own notices to its owner.
type OwnerAlerter interface {
	Alert(ctx context.Context, text string) (channel, chat string, err error)
}

// Appender is where the watch records (the event store).
type Appender interface {
	Append(ctx context.Context, stream string, expected eventstore.ExpectedVersion, events ...domain.NewEvent) (eventstore.AppendResult, error)
}

// Watch records the health changes the channels report as events,
// keeps each channel's state for /readyz, and alerts the owner when a
// channel stays unable to receive for alertAfter (and again when it
// recovers after such an alert).
type Watch struct {
	store      Appender
	owner      OwnerAlerter
	alertAfter time.Duration
	log        *slog.Logger
	// after runs f once d has passed, unless the returned stop is called
	// first (time.AfterFunc; tests fire it themselves).
	after func(d time.Duration, f func()) (stop func() bool)

	mu     sync.Mutex
	ctx    context.Context // the process's; set by Start before channels start
	states map[string]*channelState
}

type channelState struct {
	state     string
	since     time.Time
	stopTimer func() bool
	alerted   bool
}

// New checks the watch's collaborators; alertAfter 0 never alerts.
func New(store Appender, owner OwnerAlerter, alertAfter time.Duration, log *slog.Logger) (*Watch, error) {
	if store == nil || owner == nil || log == nil {
		return nil, errors.New("channelhealth: a watch needs a store, an owner to alert and a logger")
	}
	return &Watch{store: store, owner: owner, alertAfter: alertAfter, log: log, ctx: context.Background(),
		states: map[string]*channelState{}, after: afterFunc}, nil
}

func afterFunc(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }

// Attach makes the channels that report their health report to w.
func (w *Watch) Attach(chs map[string]channels.Channel) {
	for _, ch := range chs {
		if hr, ok := ch.(channels.HealthReporter); ok {
			hr.ReportHealth(w.report)
		}
	}
}

// Start sets the context the records and alerts run in (the process's,
// before the channels start); it returns at once.
func (w *Watch) Start(ctx context.Context) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ctx = ctx
}

// Unhealthy lists the channels that cannot receive now, "name: state",
// sorted.
func (w *Watch) Unhealthy() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for name, s := range w.states {
		if s.state != channels.HealthUp {
			out = append(out, name+": "+s.state)
		}
	}
	slices.Sort(out)
	return out
}

// report takes one health change from a channel's receiving goroutine.
func (w *Watch) report(h channels.Health) {
	ctx, downFor, alerted := w.change(h)
	w.record(ctx, h, downFor)
	if h.State == channels.HealthUp && alerted {
		w.alert(ctx, h.Channel, system.AlertChannelRecovered,
			fmt.Sprintf("%s is receiving messages again, after %s.", h.Channel, downFor.Round(time.Second)))
	}
}

// change updates the channel's state and its alert timer; it returns how
// long the channel was unable to receive (on recovery) and whether the
// owner was alerted about it.
func (w *Watch) change(h channels.Health) (context.Context, time.Duration, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.states[h.Channel]
	if s == nil {
		s = &channelState{state: channels.HealthUp}
		w.states[h.Channel] = s
	}
	now := time.Now()
	if h.State == channels.HealthUp {
		if s.state == channels.HealthUp {
			return w.ctx, 0, false
		}
		downFor, alerted := now.Sub(s.since), s.alerted
		if s.stopTimer != nil {
			s.stopTimer()
		}
		// A new state, so a timer of this outage that fired already finds
		// itself replaced.
		w.states[h.Channel] = &channelState{state: channels.HealthUp, since: now}
		return w.ctx, downFor, alerted
	}
	if s.state == channels.HealthUp {
		s.since = now
		if w.alertAfter > 0 {
			s.stopTimer = w.after(w.alertAfter, func() { w.stillDown(h.Channel, s) })
		}
	}
	s.state = h.State
	return w.ctx, 0, false
}

// stillDown alerts the owner when the outage the timer was set for goes on.
func (w *Watch) stillDown(name string, s *channelState) {
	w.mu.Lock()
	if w.states[name] != s || s.state == channels.HealthUp || s.alerted {
		w.mu.Unlock()
		return
	}
	s.alerted = true
	ctx, state, since := w.ctx, s.state, s.since
	w.mu.Unlock()
	w.alert(ctx, name, system.AlertChannelDown, fmt.Sprintf(
		"%s has not received messages for %s (%s). omega keeps retrying; check the network, the token and the platform's status.",
		name, time.Since(since).Round(time.Second), state))
}

// record appends the change to the channel's stream; a failure is logged,
// never stops the channel.
func (w *Watch) record(ctx context.Context, h channels.Health, downFor time.Duration) {
	var p domain.Payload
	switch h.State {
	case channels.HealthDown:
		p = system.ChannelDown{Channel: h.Channel, Error: h.Err, FailedPolls: h.Failures}
	case channels.HealthStalled:
		p = system.ChannelStalled{Channel: h.Channel, Error: h.Err, FailedPolls: h.Failures}
	default:
		p = system.ChannelRecovered{Channel: h.Channel, FailedPolls: h.Failures, DownMs: downFor.Milliseconds()}
	}
	w.appendOn(ctx, h.Channel, p)
}

// alert tells the owner and records the outcome.
func (w *Watch) alert(ctx context.Context, name, kind, text string) {
	ch, chat, err := w.owner.Alert(ctx, text)
	out := system.OwnerAlerted{Kind: kind, Text: text, Channel: ch, Chat: chat}
	if err != nil {
		w.log.Warn("owner alert about a channel not delivered", "channel", name, "kind", kind, "err", err)
		out.Error = err.Error()
	}
	w.appendOn(ctx, name, out)
}

func (w *Watch) appendOn(ctx context.Context, name string, p domain.Payload) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	ev, err := domain.NewEventFrom(p, domain.Metadata{Channel: name})
	if err == nil {
		_, err = w.store.Append(ctx, system.ChannelStream(name), eventstore.Any, ev)
	}
	if err != nil {
		w.log.Error("could not record a channel's health", "channel", name, "event", p.EventType(), "err", err)
	}
}

// State is one channel's receiving state and since when it holds.
type State struct {
	Name  string
	State string    // channels.HealthUp, HealthDown or HealthStalled
	Since time.Time // zero for a channel that has been up since the start
}

// States returns the named channels' states, sorted by name; a channel
// that never reported is up.
func (w *Watch) States(names []string) []State {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]State, 0, len(names))
	for _, n := range names {
		st := State{Name: n, State: channels.HealthUp}
		if s := w.states[n]; s != nil {
			st.State, st.Since = s.state, s.since
		}
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b State) int { return strings.Compare(a.Name, b.Name) })
	return out
}
