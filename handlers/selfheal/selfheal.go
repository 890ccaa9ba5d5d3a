// Package selfheal follows up a self-healing effort: after each iteration
// (a SELF_HEAL: marker, from a turn, a check-in or an earlier follow-up)
// it waits a delay, asks the provider to run the verification and go on
// fixing, and applies the reply's markers. SELF_HEAL_RESOLVED ends the
// effort; the tenth iteration escalates to the owner, once, with what
// was tried. Everything is on the selfheal stream, claimed with expected
// versions, so a restart resumes where it stopped and two processes never
// follow up the same iteration.
package selfheal

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/markers"
	"github.com/omega-gateway/omega/domain/selfheal"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/domain/usage"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/handlers/duework"
	"github.com/omega-gateway/omega/providers"
)

// Kind is the due-work kind of self-heal follow-ups.
const Kind = "selfheal"

// Provider completes one prompt.
type Provider interface {
	Complete(ctx context.Context, req providers.Request) (providers.Response, error)
}

// Markers applies a reply's markers as a turn would.
type Markers func(ctx context.Context, tn *turn.Turn, raw string) (string, []markers.AppliedMarker, error)

// Channels finds the channel the owner is on.
type Channels interface {
	Channel(name string) (channels.Channel, bool)
}

// Clock is told when the next follow-up falls due.
type Clock interface {
	Set(it duework.Item)
}

// Config holds the runner's dependencies and settings.
type Config struct {
	Store    eventstore.Store
	Registry *domain.Registry
	Provider Provider
	Markers  Markers
	Channels Channels
	Clock    Clock
	Logger   *slog.Logger
	// System is the system prompt of follow-ups.
	System func() string
	// Owner is who is told of an escalation (channel and chat); empty:
	// the escalation is recorded as undeliverable.
	OwnerChannel, OwnerChat string
	Language                string
	// Delay is the pause between an iteration and its follow-up (0: 2m).
	Delay   time.Duration
	Model   string
	WorkDir string
	Now     func() time.Time
	// NoTools: the provider only writes text. A follow-up asks it to run
	// the verification and go on fixing, which it cannot do, and words
	// alone would only count down to a pointless escalation; the effort
	// is left recorded, untouched, for a provider with tools.
	NoTools bool
}

// Runner follows up self-healing; Handle is its due-work handler.
type Runner struct {
	cfg     Config
	skipped sync.Once
}

// New checks the dependencies and returns a runner.
func New(cfg Config) (*Runner, error) {
	switch {
	case cfg.Store == nil, cfg.Registry == nil, cfg.Provider == nil, cfg.Markers == nil, cfg.Channels == nil,
		cfg.Clock == nil, cfg.Logger == nil:
		return nil, errors.New("selfheal: store, registry, provider, markers, channels, clock and logger are required")
	}
	cfg.Delay = cmp.Or(cfg.Delay, 2*time.Minute)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.System == nil {
		cfg.System = func() string { return "" }
	}
	return &Runner{cfg: cfg}, nil
}

// Kick makes the runner look at the stream now (at start, so an effort
// survives restarts; Kicks does it when a SELF_HEAL marker was applied).
func (r *Runner) Kick() {
	kick(r.cfg.Clock, r.cfg.Now())
}

func kick(c Clock, now time.Time) {
	c.Set(duework.Item{Kind: Kind, ID: selfheal.SelfHealStream, Due: now})
}

// Kicks puts the effort on the clock when a reply's markers opened or
// continued it (SELF_HEAL), so its follow-up is scheduled without
// polling, whichever reply it came from: a turn's, a check-in's or a
// follow-up's.
func Kicks(c Clock) duework.MarkerWake {
	return duework.MarkerWake{Marker: markers.NameSelfHeal, Item: duework.Item{Kind: Kind, ID: selfheal.SelfHealStream}, Clock: c}
}

// Handle takes the effort's next step: wait for the follow-up's time,
// claim and call it, apply its markers, escalate.
func (r *Runner) Handle(ctx context.Context, _ duework.Item) error {
	if r.cfg.NoTools {
		return r.decline(ctx)
	}
	// Each step is recorded before the next is taken, so the loop ends
	// when the effort waits for its next follow-up or is over; only
	// conflicts (another process took the step) are bounded.
	conflicts := 0
	for conflicts < 10 {
		st, err := r.load(ctx)
		if err != nil {
			r.retryLater()
			return err
		}
		done, err := r.step(ctx, st)
		switch {
		case errors.Is(err, eventstore.ErrConcurrency):
			conflicts++
		case err != nil:
			r.retryLater()
			return err
		case done:
			return nil
		}
	}
	return errors.New("selfheal: the stream kept changing under the runner")
}

// decline says once, when an effort is open, why it is not followed up.
func (r *Runner) decline(ctx context.Context) error {
	st, err := r.load(ctx)
	if err != nil || !st.Active {
		return err
	}
	r.skipped.Do(func() {
		r.cfg.Logger.Warn("selfheal: not following up: the provider has no tools to run the verification or the fix; "+
			"the effort stays recorded for a provider that has them (Claude Code)", "anomaly", st.Description)
	})
	return nil
}

func (r *Runner) retryLater() {
	r.cfg.Clock.Set(duework.Item{Kind: Kind, ID: selfheal.SelfHealStream, Due: r.cfg.Now().Add(time.Minute)})
}

// step performs one step and reports whether the effort has nothing more
// to do now.
func (r *Runner) step(ctx context.Context, st selfheal.SelfHeal) (bool, error) {
	switch f := st.FollowUp; {
	case !st.Active:
		return true, nil
	case st.Escalated:
		if st.Notified {
			return true, nil
		}
		return false, r.escalate(ctx, st)
	case f != nil && f.Iteration == st.Iteration && !f.Replied:
		return false, r.call(ctx, st)
	case f != nil && f.Iteration == st.Iteration && !f.Done:
		return false, r.apply(ctx, st)
	case f != nil && f.Iteration == st.Iteration:
		// The reply neither continued nor resolved the effort: the
		// iteration counts as failed, so the limit holds whatever the
		// model says.
		ps := st.Heal(st.Description, st.Verification)
		if len(ps) == 0 {
			return true, nil
		}
		return false, r.record(ctx, eventstore.Exact(st.Version), fmt.Sprintf("idle/%d/%d", st.Effort, st.Iteration), ps...)
	}
	due, ok := st.FollowUpDue(r.cfg.Delay)
	if !ok {
		return true, nil
	}
	if now := r.cfg.Now(); due.After(now) {
		r.cfg.Clock.Set(duework.Item{Kind: Kind, ID: selfheal.SelfHealStream, Due: due})
		return true, nil
	}
	return false, r.record(ctx, eventstore.Exact(st.Version), fmt.Sprintf("followup/%d/%d", st.Effort, st.Iteration),
		selfheal.SelfHealFollowUpStarted{Effort: st.Effort, Iteration: st.Iteration, Prompt: FollowUpPrompt(st)})
}

// FollowUpPrompt is the seed's self_heal_follow_up: run the verification,
// resolve or go on fixing, with what was tried so far.
func FollowUpPrompt(st selfheal.SelfHeal) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Self-healing follow-up, iteration %d of %d.\n", st.Iteration, selfheal.MaxSelfHealIterations)
	fmt.Fprintf(&b, "Anomaly: %s\n", markers.Neutralize(st.Description))
	fmt.Fprintf(&b, "Verification test: %s\n", markers.Neutralize(cmp.Or(st.Verification, "(none given: decide how to verify the fix)")))
	b.WriteString("What was tried so far:\n")
	for i, a := range st.Attempts {
		fmt.Fprintf(&b, "%d. %s\n", i+1, markers.Neutralize(a))
	}
	b.WriteString("Run the verification test now. If it passes, reply with SELF_HEAL_RESOLVED on a line of its own. " +
		"If it fails, continue fixing and end with SELF_HEAL: <what you tried this time> | <verification test>.")
	return b.String()
}

// call makes the claimed follow-up call and records its reply.
func (r *Runner) call(ctx context.Context, st selfheal.SelfHeal) error {
	start := time.Now()
	// Background work: it stops first when a spending limit nears its end.
	tagged := providers.WithCall(ctx, providers.Call{Purpose: usage.PurposeSelfHeal, Background: true})
	resp, err := r.cfg.Provider.Complete(tagged, providers.Request{
		System: r.cfg.System(), Prompt: FollowUpPrompt(st), Model: r.cfg.Model, WorkDir: r.cfg.WorkDir,
	})
	if err != nil && ctx.Err() != nil {
		return ctx.Err() // shutting down: the call is made again at the next start
	}
	out := selfheal.SelfHealFollowUpReplied{Effort: st.Effort, Iteration: st.Iteration, Raw: resp.Text, Usage: resp.CallUsageOf(time.Since(start), err)}
	if err != nil {
		r.cfg.Logger.Warn("selfheal: follow-up call failed", "iteration", st.Iteration, "err", err)
		out.Raw, out.Error = "", err.Error()
	}
	return r.record(ctx, eventstore.Any, fmt.Sprintf("reply/%d/%d", st.Effort, st.Iteration), out)
}

// apply applies the reply's markers (SELF_HEAL iterates, SELF_HEAL_RESOLVED
// resolves) as a turn of the owner would, then marks the follow-up done.
func (r *Runner) apply(ctx context.Context, st selfheal.SelfHeal) error {
	var applied []markers.AppliedMarker
	if raw := st.FollowUp.Raw; raw != "" {
		ch, chat := cmp.Or(r.cfg.OwnerChannel, Kind), cmp.Or(r.cfg.OwnerChat, "owner")
		tn := &turn.Turn{
			ID:       fmt.Sprintf("selfheal-%d-i%d", st.Effort, st.Iteration),
			Received: &turn.MessageReceived{Channel: ch, SenderID: chat, ChatID: chat},
		}
		var err error
		if _, applied, err = r.cfg.Markers(ctx, tn, raw); err != nil {
			return fmt.Errorf("selfheal: markers of iteration %d: %w", st.Iteration, err)
		}
	}
	return r.record(ctx, eventstore.Any, fmt.Sprintf("done/%d/%d", st.Effort, st.Iteration),
		selfheal.SelfHealFollowUpDone{Effort: st.Effort, Iteration: st.Iteration, Markers: applied})
}

// escalate tells the owner, at most once: the notice is claimed before it
// is sent.
func (r *Runner) escalate(ctx context.Context, st selfheal.SelfHeal) error {
	var tried []string
	for i, a := range st.Attempts {
		tried = append(tried, fmt.Sprintf("%d. %s", i+1, a))
	}
	text := i18n.More(r.cfg.Language, i18n.SelfHealGaveUp, st.Iteration, st.Description, strings.Join(tried, "\n"))
	if err := r.record(ctx, eventstore.Exact(st.Version), fmt.Sprintf("escalate/%d", st.Effort),
		selfheal.SelfHealOwnerNotified{Text: text}); err != nil {
		return err
	}
	if err := r.send(ctx, text); err != nil {
		r.cfg.Logger.Error("selfheal: escalation not delivered", "err", err)
		return r.record(ctx, eventstore.Any, fmt.Sprintf("escalate/%d/failed", st.Effort),
			selfheal.SelfHealOwnerNotified{Text: text, Error: err.Error()})
	}
	r.cfg.Logger.Warn("selfheal: escalated to the owner", "iterations", st.Iteration, "anomaly", st.Description)
	return nil
}

func (r *Runner) send(ctx context.Context, text string) error {
	if r.cfg.OwnerChannel == "" {
		return errors.New("no owner to tell (OMEGA_HEARTBEAT_TARGET)")
	}
	ch, ok := r.cfg.Channels.Channel(r.cfg.OwnerChannel)
	if !ok {
		return fmt.Errorf("%w: %s", channels.ErrNoChannel, r.cfg.OwnerChannel)
	}
	_, err := ch.SendText(ctx, r.cfg.OwnerChat, text)
	return err
}

func (r *Runner) load(ctx context.Context) (selfheal.SelfHeal, error) {
	var st selfheal.SelfHeal
	_, err := eventstore.Fold(ctx, r.cfg.Store, r.cfg.Registry, selfheal.SelfHealStream, &st)
	return st, err
}

func (r *Runner) record(ctx context.Context, expected eventstore.ExpectedVersion, key string, ps ...domain.Payload) error {
	if len(ps) == 0 {
		return nil
	}
	md := domain.Metadata{CorrelationID: selfheal.SelfHealStream, CausationID: selfheal.SelfHealStream + "/" + key}
	evs, err := domain.NewEvents(md, ps...)
	if err != nil {
		return err
	}
	if _, err := r.cfg.Store.Append(ctx, selfheal.SelfHealStream, expected, evs...); err != nil {
		return fmt.Errorf("selfheal: record %s: %w", key, err)
	}
	return nil
}
