package heartbeat

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/heartbeat"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/domain/usage"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/providers"
)

// begin claims the slot with the cycle's first event and drives it.
func (r *Runner) begin(ctx context.Context, scope, project string, slot time.Time, lines []string) error {
	start := time.Now()
	r.cfg.Logger.Info("heartbeat: cycle started", "scope", scope, "at", slot.In(r.cfg.Location).Format("15:04"))
	enrichment, err := r.cfg.Context.Enrichment(ctx, r.cfg.Target, project)
	if err != nil {
		return fmt.Errorf("heartbeat %s: enrichment: %w", scope, err)
	}
	stream := heartbeat.HeartbeatCycleStream(scope, slot)
	started := heartbeat.HeartbeatCycleStarted{Scope: scope, Project: project, Slot: slot.UTC(), Items: lines,
		Enrichment: enrichment, Target: r.cfg.Target.String(), Owner: r.cfg.Owner}
	if err := r.append(ctx, stream, eventstore.NoStream, "start", started); err != nil {
		if errors.Is(err, eventstore.ErrConcurrency) {
			return nil // another process runs this slot
		}
		return err
	}
	err = r.drive(ctx, stream)
	r.cfg.Logger.Info("heartbeat: cycle completed", "scope", scope, "took", time.Since(start).Round(time.Millisecond), "err", err)
	return err
}

// drive performs the cycle's next steps until it is complete.
func (r *Runner) drive(ctx context.Context, stream string) error {
	for range 20 {
		st, err := r.load(ctx, stream)
		if err != nil {
			return err
		}
		var step error
		switch st.Next() {
		case heartbeat.HeartbeatStepNone:
			return nil
		case heartbeat.HeartbeatStepClassify:
			step = r.classify(ctx, stream, st)
		case heartbeat.HeartbeatStepCall:
			step = r.call(ctx, stream, st)
		case heartbeat.HeartbeatStepProcess:
			step = r.process(ctx, stream, st)
		case heartbeat.HeartbeatStepAlert:
			step = r.alert(ctx, stream, st)
		case heartbeat.HeartbeatStepComplete:
			outcome := st.Outcome()
			step = r.append(ctx, stream, eventstore.Exact(st.Version), "complete", heartbeat.HeartbeatCycleCompleted{Outcome: outcome})
			if step == nil {
				r.cfg.Logger.Info("heartbeat: cycle outcome", "stream", stream, "outcome", outcome)
			}
		}
		if step != nil && !errors.Is(step, eventstore.ErrConcurrency) {
			return step
		}
	}
	return fmt.Errorf("heartbeat %s: the cycle kept changing under the runner", stream)
}

// classify groups a long checklist by domain with the fast model; a short
// one, or a failed classification, is one group.
func (r *Runner) classify(ctx context.Context, stream string, st heartbeat.HeartbeatCycle) error {
	items := checkItems(st.Started.Items)
	all := []heartbeat.HeartbeatGroup{{Name: "all", Items: st.Started.Items}}
	ev := heartbeat.HeartbeatClassified{Groups: all}
	if len(items) > heartbeat.HeartbeatDirectMax {
		var numbered strings.Builder
		for i, it := range items {
			fmt.Fprintf(&numbered, "%d. %s\n", i+1, it)
		}
		start := time.Now()
		resp, err := r.cfg.Provider.Complete(providers.WithCall(ctx, checkIn), providers.Request{
			Prompt: r.cfg.Prompts.HeartbeatClassify(numbered.String()), Model: r.cfg.ModelFast, MaxTurns: 1, WorkDir: r.cfg.WorkDir,
		})
		ev.Usage = resp.CallUsageOf(time.Since(start), err)
		switch {
		case err != nil:
			ev.Error = err.Error()
		default:
			ev.Raw = resp.Text
			if groups, perr := heartbeat.ParseHeartbeatGroups(resp.Text, items); perr != nil {
				ev.Error = perr.Error()
			} else {
				ev.Groups = groups
			}
		}
		if ev.Error != "" {
			r.cfg.Logger.Warn("heartbeat: classification failed, one call for all", "stream", stream, "err", ev.Error)
		}
	}
	return r.append(ctx, stream, eventstore.Exact(st.Version), "classify", ev)
}

// checkItems are the checklist's items without headers and comments.
func checkItems(lines []string) []string {
	var out []string
	for _, l := range lines {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			out = append(out, l)
		}
	}
	return out
}

// call claims the pending groups' calls in one append, then calls them in
// parallel (bounded) and records each reply as it comes.
func (r *Runner) call(ctx context.Context, stream string, st heartbeat.HeartbeatCycle) error {
	pending := st.PendingGroups()
	prompts := make([]string, len(pending))
	claims := make([]domain.Payload, len(pending))
	for i, g := range pending {
		prompts[i] = r.prompt(st, st.Classified.Groups[g])
		claims[i] = heartbeat.HeartbeatGroupCalled{Group: g, Model: r.cfg.ModelComplex, Prompt: prompts[i]}
	}
	if err := r.append(ctx, stream, eventstore.Exact(st.Version), "call", claims...); err != nil {
		return err
	}
	system := r.cfg.Context.System(st.Started.Project)
	sem := make(chan struct{}, r.cfg.Parallel)
	var wg sync.WaitGroup
	errs := make([]error, len(pending))
	for i, g := range pending {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			start := time.Now()
			resp, err := r.cfg.Provider.Complete(providers.WithCall(ctx, checkIn), providers.Request{
				System: system, Prompt: prompts[i], Model: r.cfg.ModelComplex, WorkDir: r.cfg.WorkDir,
			})
			if err != nil && ctx.Err() != nil {
				errs[i] = ctx.Err() // shutting down: the restart calls it again
				return
			}
			usage := resp.CallUsageOf(time.Since(start), err)
			var out domain.Payload = heartbeat.HeartbeatGroupReplied{Group: g, Raw: resp.Text, Usage: usage}
			if err != nil {
				r.cfg.Logger.Warn("heartbeat: group call failed", "stream", stream, "group", g, "err", err)
				out = heartbeat.HeartbeatGroupFailed{Group: g, Error: err.Error(), Usage: usage}
			}
			errs[i] = r.append(ctx, stream, eventstore.Any, fmt.Sprintf("reply/%d", g), out)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// prompt is a group's prompt: enrichment first, so learned rules frame
// the checklist, then the heartbeat template with the group's items.
func (r *Runner) prompt(st heartbeat.HeartbeatCycle, g heartbeat.HeartbeatGroup) string {
	body := r.cfg.Prompts.HeartbeatPrompt(strings.Join(g.Items, "\n"))
	if st.Started.Enrichment == "" {
		return body
	}
	return st.Started.Enrichment + "\n\n" + body
}

// process applies each replied group's markers and evaluates it.
func (r *Runner) process(ctx context.Context, stream string, st heartbeat.HeartbeatCycle) error {
	for _, g := range st.Unprocessed() {
		tn := r.turn(stream, g, st.Started)
		text, applied, err := r.cfg.Markers(ctx, tn, st.Replies[g])
		if err != nil {
			return fmt.Errorf("heartbeat %s: markers of group %d: %w", stream, g, err)
		}
		ok, alert := heartbeat.HeartbeatOK(text)
		if err := r.append(ctx, stream, eventstore.Any, fmt.Sprintf("process/%d", g),
			heartbeat.HeartbeatGroupProcessed{Group: g, Text: alert, OK: ok, Markers: applied}); err != nil {
			return err
		}
	}
	return nil
}

// turn stands for one group of the check-in where markers expect a turn:
// its id keys the markers' effects (applied once), its sender is the
// alert target, its project the cycle's.
func (r *Runner) turn(stream string, g int, st *heartbeat.HeartbeatCycleStarted) *turn.Turn {
	target := r.cfg.Target
	if target.Channel == "" {
		target = Target{Channel: Kind, Chat: "owner"}
	}
	return &turn.Turn{
		ID: fmt.Sprintf("%s-g%d", stream, g),
		Received: &turn.MessageReceived{Channel: target.Channel, SenderID: target.Chat, ChatID: target.Chat,
			Heartbeat: true},
		Context: &turn.ContextBuilt{Project: st.Project},
	}
}

// alert claims the joined alert and sends it to the target.
func (r *Runner) alert(ctx context.Context, stream string, st heartbeat.HeartbeatCycle) error {
	text := st.AlertText()
	if err := r.append(ctx, stream, eventstore.Exact(st.Version), "alert",
		heartbeat.HeartbeatAlertStarted{Text: text, Target: r.cfg.Target.String()}); err != nil {
		return err
	}
	var outcome domain.Payload
	res, err := r.send(ctx, text)
	if err != nil {
		r.cfg.Logger.Warn("heartbeat: alert not delivered", "stream", stream, "target", r.cfg.Target.String(), "err", err)
		outcome = heartbeat.HeartbeatAlertFailed{Error: err.Error()}
	} else {
		outcome = heartbeat.HeartbeatAlertSent{PlatformIDs: res.PlatformIDs}
	}
	return r.append(ctx, stream, eventstore.Any, "alert/outcome", outcome)
}

// ErrNoTarget: no OMEGA_HEARTBEAT_TARGET and no owner to default to.
var ErrNoTarget = errors.New("no heartbeat target configured")

func (r *Runner) send(ctx context.Context, text string) (channels.SendResult, error) {
	if r.cfg.Target.Channel == "" {
		return channels.SendResult{}, ErrNoTarget
	}
	ch, ok := r.cfg.Channels.Channel(r.cfg.Target.Channel)
	if !ok {
		return channels.SendResult{}, fmt.Errorf("%w: %s", channels.ErrNoChannel, r.cfg.Target.Channel)
	}
	return ch.SendText(ctx, r.cfg.Target.Chat, text)
}

func (r *Runner) load(ctx context.Context, stream string) (heartbeat.HeartbeatCycle, error) {
	var st heartbeat.HeartbeatCycle
	_, err := eventstore.Fold(ctx, r.cfg.Store, r.cfg.Registry, stream, &st)
	return st, err
}

func (r *Runner) append(ctx context.Context, stream string, expected eventstore.ExpectedVersion, key string, ps ...domain.Payload) error {
	md := domain.Metadata{CorrelationID: stream, CausationID: stream + "/" + key}
	evs, err := domain.NewEvents(md, ps...)
	if err != nil {
		return err
	}
	if _, err := r.cfg.Store.Append(ctx, stream, expected, evs...); err != nil {
		return fmt.Errorf("heartbeat %s: record %s: %w", stream, key, err)
	}
	return nil
}

// checkIn tags a check-in's calls: omega's own background work, which
// stops first when a spending limit nears its end.
var checkIn = providers.Call{Purpose: usage.PurposeHeartbeat, Background: true}
