package reports

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/cmd/cli"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/access"
	"github.com/omega-gateway/omega/domain/identity"
	"github.com/omega-gateway/omega/domain/selfheal"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/task"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/handlers/senders"
	"github.com/spf13/cobra"
)

func timelineCmd() *cobra.Command {
	var snd string
	var limit int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "timeline [TURN_ID | heartbeat-<scope>-<slot> | selfheal]",
		Short: "Show why omega said what it said: a turn's events in order",
		Long: `timeline prints a turn's events with times relative to its start: the message,
the auth decision, the prompt sections used, the model, the raw provider reply,
what was sent. Events the turn caused on the sender's stream (welcome, session,
facts) are shown beside them. --sender CHANNEL:ID shows that sender's latest turns.
A heartbeat cycle's stream (heartbeat-global-20260101T090000Z) or the selfheal
stream is shown the same way: each provider call and reply, markers, alerts.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if (len(args) == 1) == (snd != "") {
				return fmt.Errorf("give a TURN_ID or --sender CHANNEL:ID")
			}
			a, err := cli.Open(cmd.Context(), app.OpenOptions{MustExist: true})
			if err != nil {
				return err
			}
			defer a.Close()
			ids := args
			if snd != "" {
				if ids, err = senderTurns(cmd.Context(), a, snd, limit); err != nil {
					return err
				}
				if len(ids) == 0 {
					return fmt.Errorf("no turns recorded for %s", snd)
				}
			}
			for i, id := range ids {
				if i > 0 && !asJSON {
					fmt.Fprintln(cmd.OutOrStdout())
				}
				if err := printTimeline(cmd.Context(), cmd.OutOrStdout(), a, id, asJSON); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&snd, "sender", "", "show the latest turns of CHANNEL:ID (e.g. telegram:12345)")
	cmd.Flags().IntVar(&limit, "limit", 5, "how many turns --sender shows")
	cmd.Flags().BoolVar(&asJSON, "json", false, "one JSON object per event")
	return cmd
}

func senderTurns(ctx context.Context, a *app.App, snd string, limit int) ([]string, error) {
	channel, id, ok := strings.Cut(snd, ":")
	if !ok {
		return nil, fmt.Errorf("--sender must be CHANNEL:ID, e.g. telegram:12345")
	}
	if err := a.Engine.Setup(ctx); err != nil {
		return nil, err
	}
	if err := a.Engine.CatchUp(ctx); err != nil {
		return nil, err
	}
	return a.Queries.SenderTurns(ctx, sender.SenderRef{Channel: channel, ID: id}, limit)
}

func printTimeline(ctx context.Context, w io.Writer, a *app.App, turnID string, asJSON bool) error {
	stream := timelineStream(turnID)
	evs, err := a.Store.Load(ctx, stream, 1)
	if err != nil {
		return err
	}
	if len(evs) == 0 {
		return fmt.Errorf("no turn %s", turnID)
	}
	first, err := a.Registry.Decode(evs[0])
	if err != nil {
		return err
	}
	if m, ok := first.(turn.MessageReceived); ok {
		if evs, err = withSenderEvents(ctx, a, m, turnID, evs); err != nil {
			return err
		}
		if !asJSON {
			fmt.Fprintf(w, "turn %s  %s sender %s %s  %s\n", turnID, m.Channel, m.SenderID, quoted(m.SenderName, 40), evs[0].RecordedAt.Local().Format(time.DateTime))
		}
	}
	start := evs[0].RecordedAt
	var sent turn.SentTexts
	for _, e := range evs {
		p, err := a.Registry.Decode(e)
		if err != nil {
			return err
		}
		if p, e, err = withPrompt(ctx, a, p, e); err != nil {
			return err
		}
		if p, e, err = withSentText(&sent, p, e); err != nil {
			return err
		}
		if asJSON {
			if err := writeEvent(w, e, true); err != nil {
				return err
			}
			continue
		}
		where := ""
		if e.StreamID != stream {
			where = "  [" + e.StreamID + "]"
		}
		fmt.Fprintf(w, "  %9s  %-18s %s%s\n", "+"+e.RecordedAt.Sub(start).Round(time.Millisecond).String(), e.Type, describe(p), where)
	}
	return nil
}

// withPrompt resolves a context recorded by reference: the timeline
// shows the prompt in full, as it was given to the provider, in the
// shape schema 1 recorded it.
func withPrompt(ctx context.Context, a *app.App, p domain.Payload, e domain.Event) (domain.Payload, domain.Event, error) {
	c, ok := p.(turn.ContextBuilt)
	if !ok {
		return p, e, nil
	}
	full, err := a.PromptTexts.Resolve(ctx, domain.TurnIDFromStream(e.StreamID), c)
	if err != nil {
		return p, e, err
	}
	if e.Data, err = json.Marshal(full.Texts()); err != nil {
		return p, e, err
	}
	e.Metadata.SchemaVersion = 1
	return full, e, nil
}

// withSentText gives a reply sent as it was ready the text it left to
// ReplyReady, so that --json shows what was sent.
func withSentText(sent *turn.SentTexts, p domain.Payload, e domain.Event) (domain.Payload, domain.Event, error) {
	r, ok := p.(turn.ReplySent)
	p = sent.Fill(p)
	if !ok || !r.LeavesTextToReady() {
		return p, e, nil
	}
	var err error
	e.Data, err = json.Marshal(p)
	return p, e, err
}

// timelineStream is the stream a timeline shows: check-ins and
// self-healing are streams of their own, driven like turns.
func timelineStream(turnID string) string {
	if strings.HasPrefix(turnID, "heartbeat-") || turnID == selfheal.SelfHealStream {
		return turnID
	}
	return domain.TurnStream(turnID)
}

// withSenderEvents adds what the turn recorded on its sender's profile
// stream (the linked identity's, if any) and on the pairing and identity
// streams (a pairing code offered, a /pair or /link decision) to the
// turn's events, in the order they were recorded.
func withSenderEvents(ctx context.Context, a *app.App, m turn.MessageReceived, turnID string, evs []domain.Event) ([]domain.Event, error) {
	profile, err := senders.MustNew(a.Store, a.Registry).ProfileStream(ctx, m.Channel, m.SenderID)
	if err != nil {
		return nil, err
	}
	for _, stream := range []string{profile, access.SenderPairingStream, identity.IdentityStream} {
		related, err := a.Store.Load(ctx, stream, 1)
		if err != nil {
			return nil, err
		}
		for _, e := range related {
			if e.Metadata.CorrelationID == turnID {
				evs = append(evs, e)
			}
		}
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].RecordedAt.Before(evs[j].RecordedAt) })
	return evs, nil
}

// describe names the fields that explain an event; an event without a
// summarizer shows its JSON.
func describe(p domain.Payload) string {
	if f, ok := summaries[p.EventType()]; ok {
		return f(p)
	}
	b, _ := json.Marshal(p)
	return string(b)
}

// summarizer explains one event type.
type summarizer struct {
	eventType string
	explain   func(domain.Payload) string
}

// on adapts a summary of one payload type.
func on[T domain.Payload](f func(T) string) summarizer {
	var zero T
	return summarizer{eventType: zero.EventType(), explain: func(p domain.Payload) string { return f(p.(T)) }}
}

func summaryTable(ss ...summarizer) map[string]func(domain.Payload) string {
	m := make(map[string]func(domain.Payload) string, len(ss))
	for _, s := range ss {
		m[s.eventType] = s.explain
	}
	return m
}

var summaries = summaryTable(
	on(func(e turn.MessageReceived) string {
		s := "text=" + quoted(e.Text, 120)
		if len(e.Attachments) > 0 {
			s += fmt.Sprintf(" attachments=%d", len(e.Attachments))
		}
		if e.IsGroup {
			s += " group"
		}
		return s
	}),
	on(func(e turn.AccessGranted) string { return e.Reason }),
	on(func(e turn.AccessDenied) string { return e.Reason }),
	on(func(e access.PairingRequested) string {
		return "code=" + e.Code + " sender=" + e.Channel + ":" + e.SenderID + " expires=" + e.ExpiresAt.Format(time.RFC3339)
	}),
	on(func(e access.PairingOwnerNotified) string {
		return "code=" + e.Code + " target=" + e.Target + " " + e.Error
	}),
	on(func(e access.PairingApproved) string {
		return "code=" + e.Code + " sender=" + e.Channel + ":" + e.SenderID + " by=" + e.By
	}),
	on(func(e access.PairingRejected) string {
		return "code=" + e.Code + " sender=" + e.Channel + ":" + e.SenderID + " by=" + e.By
	}),
	on(func(e access.PairingRevoked) string { return "sender=" + e.Channel + ":" + e.SenderID + " by=" + e.By }),
	on(func(e identity.IdentityLinked) string { return e.Alias + " → " + e.Canonical + " by=" + e.By }),
	on(func(e identity.IdentityUnlinked) string { return e.Alias + " ↛ " + e.Canonical + " by=" + e.By }),
	on(func(e turn.WelcomeSent) string { return "language=" + e.Language + errSuffix(e.Error) }),
	on(func(e turn.AckSent) string {
		if e.Skipped {
			return "skipped (no pacing slot to spare): " + quoted(e.Text, 60)
		}
		return quoted(e.Text, 80)
	}),
	on(func(e turn.CommandAnswered) string { return e.Command + " -> " + quoted(e.Reply, 100) }),
	on(func(e turn.ContextBuilt) string {
		size := len(e.System) + len(e.Prompt)
		if e.Continuation {
			size = len(e.Prompt) // a resumed session already holds the system prompt
		}
		s := fmt.Sprintf("model=%s sections=[%s] history=%d facts=%d prompt=%dB conversation=%s", e.Model, strings.Join(e.SectionsUsed, " "), len(e.History), e.FactsCount, size, short(e.ConversationID))
		if e.SessionID != "" {
			s += " resume=" + short(e.SessionID)
		}
		if e.Project != "" {
			s += " project=" + e.Project
		}
		if len(e.SanitizeWarnings) > 0 {
			s += " warnings=" + strings.Join(e.SanitizeWarnings, "; ")
		}
		return s
	}),
	on(func(e turn.ProviderCalled) string {
		s := fmt.Sprintf("%s model=%s attempt=%d", e.Provider, e.Model, e.Attempt)
		if e.SessionID != "" {
			s += " resume=" + short(e.SessionID)
		}
		if e.FullContext {
			s += " full-context"
		}
		return s
	}),
	on(func(e turn.ProviderReplied) string {
		return fmt.Sprintf("%s %s in %s, %dB, tokens %d/%d, session=%s text=%s", e.Provider, e.Model, time.Duration(e.DurationMs)*time.Millisecond, e.ReplyBytes, e.InputTokens, e.OutputTokens, short(e.SessionID), quoted(e.Text, 200))
	}),
	on(func(e turn.ProviderFailed) string {
		s := fmt.Sprintf("%s class=%s %s", e.Provider, e.Class, quoted(e.Message, 160))
		if e.RetryFullContext {
			s += " (retrying with full context)"
		}
		return s
	}),
	on(func(e turn.ReplyReady) string { return quoted(e.Text, 200) }),
	on(func(e turn.TurnSuppressed) string { return e.Reason }),
	on(func(e turn.ReplySent) string {
		return fmt.Sprintf("kind=%s chunks=%d plain=%v", e.Kind, e.Chunks, e.PlainText)
	}),
	on(func(e turn.ReplyFailed) string {
		return fmt.Sprintf("kind=%s class=%s %s", e.Kind, e.Class, quoted(e.Error, 120))
	}),
	on(func(e turn.AttachmentsRemoved) string { return fmt.Sprintf("%d file(s)", len(e.Paths)) }),
	on(func(e turn.TurnCompleted) string {
		return fmt.Sprintf("status=%s in %s", e.Status, time.Duration(e.DurationMs)*time.Millisecond)
	}),
	on(func(e turn.MarkersApplied) string {
		parts := make([]string, len(e.Markers))
		for i, m := range e.Markers {
			parts[i] = m.Name + ": " + m.Effect
		}
		s := strings.Join(parts, "; ")
		if e.Step > 0 {
			s = fmt.Sprintf("step %d: %s", e.Step, s)
		}
		return s
	}),
	on(func(e turn.ConversationClosed) string { return "conversation=" + short(e.ConversationID) }),
	on(func(e turn.RouteDecided) string { return routeSummary(e) }),
	on(func(e turn.PlanStepCompleted) string {
		return fmt.Sprintf("step %d %s -> %s", e.Index, quoted(e.Text, 60), quoted(e.Reply, 160))
	}),
	on(func(e turn.PlanStepFailed) string {
		return fmt.Sprintf("step %d attempt %d class=%s %s", e.Index, e.Attempt, e.Class, quoted(e.Message, 120))
	}),
	on(func(e turn.PlanProgressSent) string {
		s := "announced " + quoted(e.Text, 160)
		if e.Index > 0 {
			s = fmt.Sprintf("step %d %s", e.Index, quoted(e.Text, 80))
		}
		return s + errSuffix(e.Error)
	}),
	on(func(e task.TaskScheduled) string {
		return fmt.Sprintf("%s %s due=%s repeat=%s %s", e.Kind, short(e.ID), e.Due.Format(time.RFC3339), e.Repeat, quoted(e.Description, 80))
	}),
	on(func(e task.TaskCancelled) string { return short(e.ID) + " by " + e.Reason }),
	on(func(e task.TaskUpdated) string { return short(e.ID) + " " + quoted(e.Description, 80) }),
	on(func(e sender.Welcomed) string { return "language=" + e.Language }),
	on(func(e sender.SessionStarted) string {
		return fmt.Sprintf("project=%q session=%s", e.Project, short(e.SessionID))
	}),
	on(func(e sender.SessionCleared) string { return fmt.Sprintf("project=%q %s", e.Project, e.Reason) }),
	on(func(e sender.FactRecorded) string { return e.Key + "=" + quoted(e.Value, 60) }),
	on(func(e sender.LanguageSwitched) string { return e.From + " -> " + e.To }),
)

func routeSummary(e turn.RouteDecided) string {
	if !e.Direct {
		return fmt.Sprintf("plan of %d steps model=%s: %s", len(e.Steps), e.Model, strings.Join(e.Steps, " | "))
	}
	s := "direct model=" + e.Model
	if e.Error != "" {
		return s + " (classification failed: " + quoted(e.Error, 120) + ")"
	}
	if e.Prefilter {
		return s + " (pre-filter: no classification call)"
	}
	return s
}

func quoted(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", "⏎")
	if r := []rune(s); len(r) > n {
		s = string(r[:n]) + "…"
	}
	return fmt.Sprintf("%q", s)
}

func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

func errSuffix(e string) string {
	if e == "" {
		return ""
	}
	return " (not delivered: " + e + ")"
}
