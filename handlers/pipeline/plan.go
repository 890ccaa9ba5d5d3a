package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"

	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/markers"
	"github.com/omega-gateway/omega/domain/promptctx"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/domain/usage"
	"github.com/omega-gateway/omega/handlers/pipeline/replytext"
	"github.com/omega-gateway/omega/providers"
)

// classify asks the fast model whether the turn needs a plan and records
// the decision; a message the local pre-filter finds no plan in is
// answered directly without asking. Any failure falls back to a direct
// answer, on record.
func (d *Driver) classify(ctx context.Context, st *turnState, log *slog.Logger) error {
	fast := d.Config.ModelFast
	if d.Config.ProviderProblem != nil {
		// The direct path explains the problem to the user.
		st.add(turn.RouteDecided{Direct: true, Model: fast, Error: "provider unavailable"})
		return nil //nolint:nilerr // the direct path explains the problem to the user
	}
	c := st.Context
	if !promptctx.NeedsPlan(c.Message).Classify {
		// Plain conversation: one provider call, not two.
		st.add(turn.RouteDecided{Direct: true, Model: fast, Prefilter: true})
		return nil
	}
	prompt := promptctx.ClassificationPrompt(c.Message, promptctx.ClassificationContext(c.Project, c.History, d.skillNames(ctx)))
	stop := d.typing(ctx, st, log)
	start := d.now()
	resp, err := d.Provider.Complete(forCall(ctx, st, usage.PurposeClassifier), providers.Request{Model: fast, Prompt: prompt, WorkDir: d.Config.Workspace})
	used := resp.CallUsageOf(d.now().Sub(start), err)
	stop()
	if ctx.Err() != nil {
		return ctx.Err() // the turn resumes at the classification
	}
	if err != nil {
		log.Warn("classification failed, answering directly", "class", providers.ClassOf(err), "err", err)
		st.addOutcome(turn.RouteDecided{Direct: true, Model: fast, Error: d.Config.Redactor.Error(err), Usage: used})
		return nil
	}
	steps := markers.ParsePlan(resp.Text)
	if steps == nil {
		st.addOutcome(turn.RouteDecided{Direct: true, Model: fast, Raw: resp.Text, Usage: used})
		return nil
	}
	log.Info("multi-step plan", "steps", len(steps))
	// Recorded with the next step's intent (retried through an outage like
	// every provider outcome); one lost to a crash is simply asked again.
	st.addOutcome(turn.RouteDecided{Steps: steps, Model: cmp.Or(d.Config.ModelComplex, fast), Raw: resp.Text, Usage: used})
	return nil
}

// planStep runs the next step of the plan with the complex model, the
// turn's context and the results so far, and records its outcome.
func (d *Driver) planStep(ctx context.Context, st *turnState, profile sender.SenderProfile, log *slog.Logger) error {
	c, route := st.Context, st.Route
	index, attempt := st.NextStepIndex(), st.NextAttempt()
	text := route.Steps[index-1]
	req := providers.Request{
		System: c.System, Model: route.Model, WorkDir: d.Config.Workspace,
		Prompt: promptctx.StepPrompt(c.Message, route.Steps, st.StepReplies, index),
	}
	for _, h := range c.History {
		req.History = append(req.History, providers.Message{Role: h.Role, Content: h.Text})
	}
	var err error
	if req.MCPServers, err = d.mcpServers(ctx, c.Skills); err != nil { // the message's skills serve its plan too
		return err
	}
	stopTyping := d.typing(ctx, st, log)
	stopStatus := d.statusUpdates(ctx, st, profile, nil, log)
	start := d.now()
	resp, err := d.Provider.Complete(forCall(ctx, st, usage.PurposePlanStep), req)
	elapsed := d.now().Sub(start)
	stopStatus()
	stopTyping()
	if ctx.Err() != nil {
		return ctx.Err() // the turn resumes at this step
	}
	if err != nil {
		class := providers.ClassOf(err)
		failed := turn.PlanStepFailed{Index: index, Attempt: attempt, Class: class.String(), Message: d.Config.Redactor.Error(err)}
		if failed.ResetAt = providers.RefusedUntil(err); failed.ResetAt != nil { // no call made: the plan stops
			log.Warn("plan step refused by a spending limit", "step", index, "reset_at", *failed.ResetAt)
			return d.recordOutcome(ctx, st, failed)
		}
		failed.Usage = resp.CallUsageOf(elapsed, err)
		log.Warn("plan step failed", "step", index, "attempt", attempt, "class", class, "err", err)
		return d.recordOutcome(ctx, st, failed)
	}
	// Markers act on other streams: the raw reply goes on record first.
	return d.recordOutcome(ctx, st, turn.PlanStepCompleted{Index: index, Text: text, Reply: resp.Text, Usage: resp.CallUsage(elapsed)})
}

// planProgress sends the plan's announcement or, after a step, applies the
// step's markers and reports the step. The marker events and the progress
// record are appended together, so a crash in between repeats both; the
// markers' effects are idempotent per step.
func (d *Driver) planProgress(ctx context.Context, st *turnState, profile sender.SenderProfile, log *slog.Logger) error {
	lang := d.language(st, profile)
	steps := st.Route.Steps
	index := st.Progressed
	var text string
	out := Processed{}
	if index == 0 {
		text = replytext.PlanAnnounce(lang, steps)
	} else {
		done := st.StepsDone[index-1]
		out.Text = done.Reply
		if d.Replies != nil {
			var err error
			if out, err = d.Replies.Process(ctx, &st.Turn, done.Reply, index); err != nil {
				return fmt.Errorf("markers of step %d: %w", index, err)
			}
		}
		text = i18n.More(lang, i18n.StepDone, index, len(steps), done.Text)
	}
	sent := turn.PlanProgressSent{Index: index, Text: text, Reply: out.Text}
	if _, err := d.send(ctx, st, text); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		log.Warn("plan progress not delivered", "index", index, "err", err)
		sent.Error = d.Config.Redactor.Error(err)
	}
	st.add(out.Events...)
	return d.recordOutcome(ctx, st, sent)
}

// planSummary makes the plan's final reply (see replytext.PlanSummary).
func (d *Driver) planSummary(st *turnState, profile sender.SenderProfile) {
	st.add(turn.ReplyReady{Text: replytext.PlanSummary(&st.Turn, d.language(st, profile), d.Config.Location)})
}
