package budget

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/omega-gateway/omega/domain/budget"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/system"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/providers"
)

// alert tells the owner, once per limit, period and threshold, that a
// limit reached 80 % or all of it. The alert's stream is created by its
// record, so whichever process records it first is the only one; a
// crash between the send and its record sends it twice rather than
// never. A failed alert is logged and recorded; the call goes on.
func (g *Guard) alert(ctx context.Context, scopes []budget.Scope, now time.Time) {
	for _, s := range scopes {
		for _, period := range []string{budget.Day, budget.Month} {
			limit := s.Limits.Of(period)
			share := s.SpentIn(period).Fraction(limit)
			if limit.IsZero() || share < budget.AlertShare {
				continue
			}
			percent := 80
			if share >= 1 {
				percent = 100
			}
			start := budget.PeriodStart(period, now, g.cfg.Location)
			who := s.Name
			if who == "" {
				who = "everything"
			}
			text := i18n.Alert(g.cfg.Language, i18n.AlertBudget, percent, period, who, limit.String(),
				budget.PeriodEnd(period, now, g.cfg.Location).Format("2006-01-02 15:04 MST"))
			g.alertOnce(ctx, budget.AlertStream(s.Name, period, start, percent), text)
		}
	}
}

func (g *Guard) alertOnce(ctx context.Context, stream, text string) {
	v, err := g.store.StreamVersion(ctx, stream)
	if err != nil || v > 0 {
		return
	}
	out := system.OwnerAlerted{Kind: "budget", Text: text}
	if g.owner == nil {
		out.Error = "no owner to alert"
	} else if out.Channel, out.Chat, err = g.owner.Alert(ctx, text); err != nil {
		out.Error = err.Error()
	}
	if out.Error != "" {
		g.log.Warn("budget: owner alert not delivered", "text", text, "err", out.Error)
	}
	if err := g.record(ctx, stream, eventstore.NoStream, out); err != nil && !errors.Is(err, eventstore.ErrConcurrency) {
		g.log.Warn("budget: recording the owner alert failed", "stream", stream, "err", err)
	}
}

// runaway pauses a loop (background work: the heartbeat, self-heal, a
// sender's scheduled actions) when its calls, or its sender's, passed
// RunawayCalls within RunawayWindow: the call is refused until the window
// has room, LoopPaused is recorded and the owner alerted once per window.
// A person's own messages are no loop: each was written by someone, and
// the spending limits bound them; a client that posts many in a row is
// not paused.
func (g *Guard) runaway(ctx context.Context, call providers.Call, s spending, now time.Time, v budget.Verdict) (Decision, bool, error) {
	if g.cfg.RunawayCalls == 0 || !call.Background {
		return Decision{}, false, nil
	}
	loop, calls := call.Sender, s.SenderWindow
	if loop == "" {
		loop, calls = call.Purpose, s.LoopWindow
	}
	if loop == "" || !budget.Runaway(calls, g.cfg.RunawayCalls) {
		return Decision{}, false, nil
	}
	bucket := now.Truncate(g.cfg.RunawayWindow)
	until := bucket.Add(g.cfg.RunawayWindow)
	g.log.Warn("provider calls paused: runaway guard", "loop", loop, "purpose", call.Purpose, "calls", calls,
		"window", g.cfg.RunawayWindow, "until", until)
	paused := budget.LoopPaused{Loop: loop, Purpose: call.Purpose, Calls: calls, Most: g.cfg.RunawayCalls,
		Window: g.cfg.RunawayWindow.String(), Until: until}
	if err := g.record(ctx, budget.ExceededStream, eventstore.Any, paused); err != nil {
		return Decision{}, false, err
	}
	text := i18n.Alert(g.cfg.Language, i18n.AlertRunaway, loop, calls, g.cfg.RunawayWindow.String(), until.Format("15:04 MST"))
	g.alertOnce(ctx, fmt.Sprintf("budget-runaway-%s-%d", loop, bucket.Unix()), text)
	v.ResetAt = until
	return Decision{Verdict: v, Paused: true}, true, nil
}
