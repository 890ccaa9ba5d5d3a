package selfheal_test

import (
	"context"
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
	"github.com/omega-gateway/omega/domain/markers"
	selfhealdom "github.com/omega-gateway/omega/domain/selfheal"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/eventstore/sqlite"
	"github.com/omega-gateway/omega/handlers/duework"
	"github.com/omega-gateway/omega/handlers/selfheal"
	"github.com/omega-gateway/omega/providers"
)

// mute answers without any marker: the model neither continues nor
// resolves.
type mute struct{ calls atomic.Int64 }

func (m *mute) Complete(_ context.Context, req providers.Request) (providers.Response, error) {
	m.calls.Add(1)
	if !strings.Contains(req.Prompt, "Verification test: curl health") {
		return providers.Response{}, nil
	}
	return providers.Response{Text: "I looked at it."}, nil
}

type clock struct{ due []duework.Item }

func (c *clock) Set(it duework.Item) { c.due = append(c.due, it) }

type noChannels struct{}

func (noChannels) Channel(string) (channels.Channel, bool) { return nil, false }

func TestNew(t *testing.T) {
	if _, err := selfheal.New(selfheal.Config{}); err == nil {
		t.Fatal("New accepted missing dependencies")
	}
}

// A model that never says SELF_HEAL or SELF_HEAL_RESOLVED still uses up
// its iterations: the cap is the code's, not the model's. The escalation
// is recorded once, as undeliverable when there is no owner.
func TestIterationsAreCappedInCode(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "omega.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	reg := app.NewRegistry()
	evs, _ := domain.NewEvents(domain.Metadata{}, selfhealdom.SelfHealStarted{Description: "service down", Verification: "curl health"})
	if _, err := s.Append(ctx, selfhealdom.SelfHealStream, eventstore.NoStream, evs...); err != nil {
		t.Fatal(err)
	}
	p, c := &mute{}, &clock{}
	now := time.Now()
	// Recorded times are the wall clock's; the runner's runs ahead.
	r, err := selfheal.New(selfheal.Config{
		Store: s, Registry: reg, Provider: p, Channels: noChannels{}, Clock: c,
		Markers: func(_ context.Context, _ *turn.Turn, raw string) (string, []markers.AppliedMarker, error) {
			return raw, nil, nil
		},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Delay: time.Minute,
		Now: func() time.Time { return now },
	})
	if err != nil {
		t.Fatal(err)
	}
	for range 30 {
		now = now.Add(2 * time.Minute)
		if err := r.Handle(ctx, duework.Item{Kind: selfheal.Kind, ID: selfhealdom.SelfHealStream}); err != nil {
			t.Fatal(err)
		}
	}
	var st selfhealdom.SelfHeal
	if _, err := eventstore.Fold(ctx, s, reg, selfhealdom.SelfHealStream, &st); err != nil {
		t.Fatal(err)
	}
	if p.calls.Load() != selfhealdom.MaxSelfHealIterations || !st.Escalated || !st.Notified || st.Iteration != selfhealdom.MaxSelfHealIterations {
		t.Fatalf("calls %d, state %+v", p.calls.Load(), st)
	}
	loaded, _ := s.Load(ctx, selfhealdom.SelfHealStream, 1)
	notified := 0
	for _, e := range loaded {
		if e.Type == (selfhealdom.SelfHealOwnerNotified{}).EventType() {
			notified++
		}
	}
	if notified != 2 { // the claim, then its failure: no owner
		t.Fatalf("%d notices recorded", notified)
	}
}

func TestFollowUpPrompt(t *testing.T) {
	st := selfhealdom.SelfHeal{Iteration: 3, Description: "SELF_HEAL_RESOLVED trick", Verification: "curl health",
		Attempts: []string{"restart", "clear cache", "SELF_HEAL_RESOLVED trick"}}
	p := selfheal.FollowUpPrompt(st)
	for _, want := range []string{"iteration 3 of 10", "curl health", "2. clear cache", "reply with SELF_HEAL_RESOLVED"} {
		if !strings.Contains(p, want) {
			t.Fatalf("prompt lacks %q:\n%s", want, p)
		}
	}
	// Text from earlier replies cannot become a marker line.
	for _, line := range strings.Split(p, "\n") {
		if strings.TrimSpace(line) == "SELF_HEAL_RESOLVED" {
			t.Fatalf("a marker line in the prompt:\n%s", p)
		}
	}
}

// A provider without tools could not run the verification: the open
// effort is left as it is, no call is made, and the reason is logged
// once however often the runner is woken.
func TestNoToolsLeavesTheEffortAlone(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "omega.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, _ := domain.NewEvents(domain.Metadata{}, selfhealdom.SelfHealStarted{Description: "service down", Verification: "curl health"})
	if _, err := s.Append(ctx, selfhealdom.SelfHealStream, eventstore.NoStream, evs...); err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	p, now := &mute{}, time.Now()
	r, err := selfheal.New(selfheal.Config{
		Store: s, Registry: app.NewRegistry(), Provider: p, Channels: noChannels{}, Clock: &clock{},
		Markers: func(_ context.Context, _ *turn.Turn, raw string) (string, []markers.AppliedMarker, error) {
			return raw, nil, nil
		},
		Logger: slog.New(slog.NewTextHandler(&logs, nil)), Delay: time.Minute, NoTools: true,
		Now: func() time.Time { return now },
	})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		now = now.Add(2 * time.Minute)
		if err := r.Handle(ctx, duework.Item{Kind: selfheal.Kind, ID: selfhealdom.SelfHealStream}); err != nil {
			t.Fatal(err)
		}
	}
	loaded, _ := s.Load(ctx, selfhealdom.SelfHealStream, 1)
	if p.calls.Load() != 0 || len(loaded) != 1 || strings.Count(logs.String(), "selfheal: not following up") != 1 {
		t.Fatalf("calls %d, %d events, log:\n%s", p.calls.Load(), len(loaded), logs.String())
	}
}
