// Package apply applies the markers of a provider's reply: each marker's
// effect is recorded as events on the stream it concerns, and the reply
// the user sees is the text without them.
package apply

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/markers"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/handlers/effects"
	"github.com/omega-gateway/omega/handlers/pipeline"
)

// WhatsAppPairing sends a WhatsApp pairing QR code to a chat.
type WhatsAppPairing interface {
	SendQR(ctx context.Context, channel, chatID string) error
}

// Profiles reads sender profiles and finds the stream each lives on
// (senders.Service).
type Profiles interface {
	Load(ctx context.Context, channel, senderID string) (sender.SenderProfile, error)
	ProfileStream(ctx context.Context, channel, senderID string) (string, error)
}

// Follower is told what a reply's markers did once they are on record: a
// process manager that carries on what a marker began (self-heal's
// follow-ups, the heartbeat's schedule) reacts to its own markers there.
type Follower interface {
	Applied(applied []markers.AppliedMarker)
}

// Markers is the ReplyHook that applies the provider's markers as events
// and returns the reply without them, followed by the task confirmation.
type Markers struct {
	effects.Recorder
	Profiles Profiles
	Location *time.Location
	WhatsApp WhatsAppPairing // nil: WhatsApp is not enabled
	Owner    Owner           // nil: reports are recorded, nobody is alerted
	// Followers are told what each reply's markers did.
	Followers []Follower
	Logger    *slog.Logger
}

// New checks a Markers hook's collaborators: the recorder, the profiles
// and the logger are required; a nil Location means UTC.
func New(m Markers) (*Markers, error) {
	if m.Store() == nil || m.Profiles == nil || m.Logger == nil {
		return nil, errors.New("apply: markers need an effects recorder, the sender profiles and a logger")
	}
	if m.Location == nil {
		m.Location = time.UTC
	}
	return &m, nil
}

// rank is a marker's place in the seed's processing order (its spec's
// Order); unordered markers come after, in their written order.
func rank(name string) int {
	if spec, ok := markers.Lookup(name); ok && spec.Order > 0 {
		return spec.Order
	}
	return math.MaxInt
}

// markerRun is the context one reply's markers are applied in.
type markerRun struct {
	turn    *turn.Turn
	step    int
	project string
	sender  string // read-model key
	lang    string
	applied []markers.AppliedMarker
	confirm []string
	events  []domain.Payload
	profile sender.SenderProfile
	forgot  bool
}

// Process applies the markers of raw (the provider's reply to the turn,
// or to plan step step) and returns what the user sees plus the turn
// events that record the markers' effects.
func (h *Markers) Process(ctx context.Context, tn *turn.Turn, raw string, step int) (pipeline.Processed, error) {
	res := markers.ParseIn(raw, h.Location)
	m := tn.Received
	run := &markerRun{turn: tn, step: step, sender: sender.SenderKey(m.Channel, m.SenderID)}
	if tn.Context != nil {
		run.project = tn.Context.Project
	}
	type indexed struct {
		i int
		m markers.Marker
	}
	list := make([]indexed, len(res.Markers))
	for i, mk := range res.Markers {
		list[i] = indexed{i, mk}
	}
	slices.SortStableFunc(list, func(a, b indexed) int { return cmp.Compare(rank(a.m.Name()), rank(b.m.Name())) })

	if len(list) > 0 { // only markers need the profile: most replies have none
		profile, err := h.Profiles.Load(ctx, m.Channel, m.SenderID)
		if err != nil {
			return pipeline.Processed{}, err
		}
		run.profile = profile
		run.lang = h.language(tn, profile)
	}
	echo := markers.EchoFilter(m.Text, h.Location)
	for _, x := range list {
		if echo(x.m) {
			// Markers are instructions from the model's own reply only.
			run.applied = append(run.applied, markers.AppliedMarker{Name: x.m.Name(), Effect: rejectedEcho})
			continue
		}
		md := domain.Metadata{CorrelationID: tn.ID, CausationID: fmt.Sprintf("%s/s%d/m%d", tn.ID, step, x.i),
			Channel: m.Channel, Sender: m.SenderID, Project: run.project}
		am, err := h.apply(ctx, run, md, x.m)
		if err != nil {
			return pipeline.Processed{}, fmt.Errorf("apply %s: %w", x.m.Name(), err)
		}
		am.Name = x.m.Name()
		run.applied = append(run.applied, am)
	}
	for _, inv := range res.Invalid {
		run.applied = append(run.applied, markers.AppliedMarker{Name: inv.Name, Effect: "rejected: " + inv.Reason})
	}
	out := pipeline.Processed{Text: res.Text}
	if len(run.confirm) > 0 {
		out.Text = strings.TrimSpace(out.Text + "\n\n" + strings.Join(run.confirm, "\n"))
	}
	if len(run.applied) > 0 {
		out.Events = append(out.Events, turn.MarkersApplied{Step: step, Markers: run.applied})
		for _, f := range h.Followers {
			f.Applied(run.applied)
		}
	}
	out.Events = append(out.Events, run.events...)
	return out, nil
}

// CheckIn applies a check-in's reply (the heartbeat's, a self-heal
// follow-up's) through hook as a turn's reply and returns the text the
// owner sees and what its markers did: the runners' Markers port.
func CheckIn(hook pipeline.ReplyHook) func(context.Context, *turn.Turn, string) (string, []markers.AppliedMarker, error) {
	return func(ctx context.Context, tn *turn.Turn, raw string) (string, []markers.AppliedMarker, error) {
		p, err := hook.Process(ctx, tn, raw, 0)
		if err != nil {
			return "", nil, err
		}
		var applied []markers.AppliedMarker
		for _, e := range p.Events {
			if m, ok := e.(turn.MarkersApplied); ok {
				applied = append(applied, m.Markers...)
			}
		}
		return p.Text, applied, nil
	}
}

// Acts reports whether raw holds a marker, i.e. whether processing it may
// write to streams other than the turn's: only then must the raw reply be
// on record first (see Driver.flushBefore).
func (h *Markers) Acts(raw string) bool {
	return len(markers.ParseIn(raw, h.Location).Markers) > 0
}

// source tags learning recorded by a heartbeat check-in.
func (r *markerRun) source() string {
	if r.turn.Received.Heartbeat {
		return "heartbeat"
	}
	return ""
}

func (h *Markers) language(tn *turn.Turn, p sender.SenderProfile) string {
	if p.Language != "" {
		return i18n.OrDefault(p.Language)
	}
	return i18n.Detect(tn.Received.Text)
}

func (h *Markers) when(t time.Time) string {
	loc := h.Location
	if loc == nil {
		loc = time.UTC
	}
	return t.In(loc).Format("Mon 2 Jan 2006 15:04 MST")
}
