package handlers

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/markers"
	"github.com/omega-gateway/omega/providers"
)

// Classification context limits (seed: build_classification_context).
const (
	classifyHistory = 3
	classifyChars   = 80
)

const classifyInstructions = `You route requests for a personal assistant. Decide whether the request below can be handled in a single reply, or needs several steps carried out one after another.
Reply with the single word DIRECT for greetings, reminders, scheduling, lookups, simple questions and anything else one reply can do. When in doubt, reply DIRECT.
Only for complex work (changes across many files, deep research, work whose parts depend on each other) reply with a numbered list of 2 to 8 short steps, one per line, and nothing else.`

// ClassificationContext is the lightweight context the classifier sees:
// the active project, the last few messages (each cut short) and the
// skill names. Empty parts are left out; no input gives "".
func ClassificationContext(project string, history []domain.HistoryMessage, skills []string) string {
	var parts []string
	if project != "" {
		parts = append(parts, "Active project: "+project)
	}
	if len(history) > 0 {
		recent := history[max(0, len(history)-classifyHistory):]
		lines := []string{"Recent conversation:"}
		for _, h := range recent {
			lines = append(lines, fmt.Sprintf("- %s: %s", h.Role, truncateRunes(oneLine(h.Text), classifyChars)))
		}
		parts = append(parts, strings.Join(lines, "\n"))
	}
	if len(skills) > 0 {
		parts = append(parts, "Available skills: "+strings.Join(skills, ", "))
	}
	return strings.Join(parts, "\n")
}

// ClassificationPrompt is the whole classification request. The user's
// request comes last so that the classifier reads it after the rules.
func ClassificationPrompt(message, context string) string {
	var b strings.Builder
	b.WriteString(classifyInstructions)
	b.WriteString("\n\n")
	if context != "" {
		b.WriteString(context)
		b.WriteString("\n\n")
	}
	b.WriteString("Request: ")
	b.WriteString(message)
	return b.String()
}

// StepPrompt asks for one plan step, given the original task and what the
// previous steps produced. The step itself is the last line.
func StepPrompt(task string, steps []string, results []string, index int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Original task: %s\n\nYou are carrying out this plan of %d steps:\n", task, len(steps))
	for i, s := range steps {
		fmt.Fprintf(&b, "%d. %s\n", i+1, s)
	}
	if len(results) > 0 {
		b.WriteString("\nResults so far:\n")
		for i, r := range results {
			fmt.Fprintf(&b, "Step %d (%s): %s\n", i+1, steps[i], strings.TrimSpace(r))
		}
	}
	fmt.Fprintf(&b, "\nDo only this step now and report what you did.\nStep %d of %d: %s", index, len(steps), oneLine(steps[index-1]))
	return b.String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// skillNames lists the skill folders, for the classifier.
func (d *Driver) skillNames() []string {
	if d.Config.SkillsDir == "" {
		return nil
	}
	entries, err := os.ReadDir(d.Config.SkillsDir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out
}

// classify asks the fast model whether the turn needs a plan and records
// the decision. Any failure falls back to a direct answer, on record.
func (d *Driver) classify(ctx context.Context, st *turnState, log *slog.Logger) error {
	fast := d.Config.ModelFast
	if d.Config.ProviderProblem != nil {
		// The direct path explains the problem to the user.
		st.add(domain.RouteDecided{Direct: true, Model: fast, Error: "provider unavailable"})
		return nil
	}
	c := st.Context
	prompt := ClassificationPrompt(c.Message, ClassificationContext(c.Project, c.History, d.skillNames()))
	stop := d.typing(ctx, st, log)
	resp, err := d.Provider.Complete(ctx, providers.Request{Model: fast, Prompt: prompt, WorkDir: d.Config.Workspace})
	stop()
	if ctx.Err() != nil {
		return ctx.Err() // the turn resumes at the classification
	}
	if err != nil {
		log.Warn("classification failed, answering directly", "class", providers.ClassOf(err), "err", err)
		st.add(domain.RouteDecided{Direct: true, Model: fast, Error: err.Error()})
		return nil
	}
	steps := markers.ParsePlan(resp.Text)
	if steps == nil {
		st.add(domain.RouteDecided{Direct: true, Model: fast, Raw: resp.Text})
		return nil
	}
	log.Info("multi-step plan", "steps", len(steps))
	// Recorded with the next step's intent: a classification whose outcome
	// is lost to a crash is simply asked again.
	st.add(domain.RouteDecided{Steps: steps, Model: cmp.Or(d.Config.ModelComplex, fast), Raw: resp.Text})
	return nil
}

// planStep runs the next step of the plan with the complex model, the
// turn's context and the results so far, and records its outcome.
func (d *Driver) planStep(ctx context.Context, st *turnState, profile domain.SenderProfile, log *slog.Logger) error {
	c, route := st.Context, st.Route
	index, attempt := st.NextStepIndex(), st.NextAttempt()
	text := route.Steps[index-1]
	req := providers.Request{
		System: c.System, Model: route.Model, WorkDir: d.Config.Workspace,
		Prompt: StepPrompt(c.Message, route.Steps, st.StepReplies, index),
	}
	for _, h := range c.History {
		req.History = append(req.History, providers.Message{Role: h.Role, Content: h.Text})
	}
	stopTyping := d.typing(ctx, st, log)
	stopStatus := d.statusUpdates(ctx, st, profile, log)
	resp, err := d.Provider.Complete(ctx, req)
	stopStatus()
	stopTyping()
	if ctx.Err() != nil {
		return ctx.Err() // the turn resumes at this step
	}
	if err != nil {
		class := providers.ClassOf(err)
		log.Warn("plan step failed", "step", index, "attempt", attempt, "class", class, "err", err)
		return d.record(ctx, st, domain.PlanStepFailed{Index: index, Attempt: attempt, Class: class.String(), Message: err.Error()})
	}
	// Markers act on other streams: the raw reply goes on record first.
	return d.record(ctx, st, domain.PlanStepCompleted{Index: index, Text: text, Reply: resp.Text})
}

// planProgress sends the plan's announcement or, after a step, applies the
// step's markers and reports the step. The marker events and the progress
// record are appended together, so a crash in between repeats both; the
// markers' effects are idempotent per step.
func (d *Driver) planProgress(ctx context.Context, st *turnState, profile domain.SenderProfile, log *slog.Logger) error {
	lang := d.language(st, profile)
	steps := st.Route.Steps
	index := st.Progressed
	var text string
	out := Processed{}
	if index == 0 {
		list := make([]string, len(steps))
		for i, s := range steps {
			list[i] = fmt.Sprintf("%d. %s", i+1, s)
		}
		text = i18n.More(lang, i18n.PlanAnnounce, len(steps), strings.Join(list, "\n"))
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
	sent := domain.PlanProgressSent{Index: index, Text: text, Reply: out.Text}
	if _, err := d.send(ctx, st, text); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		log.Warn("plan progress not delivered", "index", index, "err", err)
		sent.Error = err.Error()
	}
	st.add(out.Events...)
	return d.record(ctx, st, sent)
}

// planSummary makes the plan's final reply: how far it got, why it
// stopped if it did, and every step's result as the user would see it (a
// step's result may carry a task confirmation, which must not be lost).
func (d *Driver) planSummary(st *turnState, profile domain.SenderProfile) {
	lang := d.language(st, profile)
	steps := st.Route.Steps
	var parts []string
	if f := st.StepFailure; st.PlanStopped() {
		parts = append(parts, i18n.More(lang, i18n.StepFailed, f.Index, len(steps), steps[f.Index-1])+"\n"+
			i18n.Text(lang, errorClassKey(f.Class)))
	}
	parts = append(parts, i18n.More(lang, i18n.PlanDone, len(st.StepsDone), len(steps)))
	for i, r := range st.StepReplies {
		if r = strings.TrimSpace(r); r != "" {
			parts = append(parts, i18n.More(lang, i18n.StepDone, i+1, len(steps), steps[i])+"\n"+r)
		}
	}
	st.add(domain.ReplyReady{Text: strings.Join(parts, "\n\n")})
}
