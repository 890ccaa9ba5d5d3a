package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/domain"
)

func timelineCmd() *cobra.Command {
	var sender string
	var limit int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "timeline [TURN_ID]",
		Short: "Show why omega said what it said: a turn's events in order",
		Long: `timeline prints a turn's events with times relative to its start: the message,
the auth decision, the prompt sections used, the model, the raw provider reply,
what was sent. Events the turn caused on the sender's stream (welcome, session,
facts) are shown beside them. --sender CHANNEL:ID shows that sender's latest turns.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if (len(args) == 1) == (sender != "") {
				return fmt.Errorf("give a TURN_ID or --sender CHANNEL:ID")
			}
			a, err := openApp(cmd.Context(), app.OpenOptions{})
			if err != nil {
				return err
			}
			defer a.Close()
			ids := args
			if sender != "" {
				if ids, err = senderTurns(cmd.Context(), a, sender, limit); err != nil {
					return err
				}
				if len(ids) == 0 {
					return fmt.Errorf("no turns recorded for %s", sender)
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
	cmd.Flags().StringVar(&sender, "sender", "", "show the latest turns of CHANNEL:ID (e.g. telegram:12345)")
	cmd.Flags().IntVar(&limit, "limit", 5, "how many turns --sender shows")
	cmd.Flags().BoolVar(&asJSON, "json", false, "one JSON object per event")
	return cmd
}

func senderTurns(ctx context.Context, a *app.App, sender string, limit int) ([]string, error) {
	channel, id, ok := strings.Cut(sender, ":")
	if !ok {
		return nil, fmt.Errorf("--sender must be CHANNEL:ID, e.g. telegram:12345")
	}
	if err := a.Engine.Setup(ctx); err != nil {
		return nil, err
	}
	if err := a.Engine.CatchUp(ctx); err != nil {
		return nil, err
	}
	rows, err := a.Store.DB().QueryContext(ctx, `SELECT turn_id FROM turns WHERE sender = $1 ORDER BY arrival DESC LIMIT $2`, channel+"-"+id, limit)
	if err != nil {
		return nil, fmt.Errorf("find turns of %s: %w", sender, err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, err
		}
		ids = append(ids, t)
	}
	// Oldest first reads like a conversation.
	for i, j := 0, len(ids)-1; i < j; i, j = i+1, j-1 {
		ids[i], ids[j] = ids[j], ids[i]
	}
	return ids, rows.Err()
}

func printTimeline(ctx context.Context, w io.Writer, a *app.App, turnID string, asJSON bool) error {
	evs, err := a.Store.Load(ctx, domain.TurnStream(turnID), 1)
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
	if m, ok := first.(domain.MessageReceived); ok {
		related, err := a.Store.Load(ctx, domain.SenderStream(m.Channel, m.SenderID), 1)
		if err != nil {
			return err
		}
		for _, e := range related {
			if e.Metadata.CorrelationID == turnID {
				evs = append(evs, e)
			}
		}
		sort.SliceStable(evs, func(i, j int) bool { return evs[i].RecordedAt.Before(evs[j].RecordedAt) })
		if !asJSON {
			fmt.Fprintf(w, "turn %s  %s sender %s %s  %s\n", turnID, m.Channel, m.SenderID, quoted(m.SenderName, 40), evs[0].RecordedAt.Local().Format(time.DateTime))
		}
	}
	start := evs[0].RecordedAt
	for _, e := range evs {
		if asJSON {
			if err := writeEvent(w, e, true); err != nil {
				return err
			}
			continue
		}
		p, err := a.Registry.Decode(e)
		if err != nil {
			return err
		}
		where := ""
		if e.StreamID != domain.TurnStream(turnID) {
			where = "  [" + e.StreamID + "]"
		}
		fmt.Fprintf(w, "  %9s  %-18s %s%s\n", "+"+e.RecordedAt.Sub(start).Round(time.Millisecond).String(), e.Type, summary(p), where)
	}
	return nil
}

// summary names the fields that explain an event.
func summary(p domain.Payload) string {
	switch e := p.(type) {
	case domain.MessageReceived:
		s := "text=" + quoted(e.Text, 120)
		if len(e.Attachments) > 0 {
			s += fmt.Sprintf(" attachments=%d", len(e.Attachments))
		}
		if e.IsGroup {
			s += " group"
		}
		return s
	case domain.AccessGranted:
		return e.Reason
	case domain.AccessDenied:
		return e.Reason
	case domain.WelcomeSent:
		return "language=" + e.Language + errSuffix(e.Error)
	case domain.AckSent:
		return quoted(e.Text, 80)
	case domain.CommandAnswered:
		return e.Command + " -> " + quoted(e.Reply, 100)
	case domain.ContextBuilt:
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
	case domain.ProviderCalled:
		s := fmt.Sprintf("%s model=%s attempt=%d", e.Provider, e.Model, e.Attempt)
		if e.SessionID != "" {
			s += " resume=" + short(e.SessionID)
		}
		if e.FullContext {
			s += " full-context"
		}
		return s
	case domain.ProviderReplied:
		return fmt.Sprintf("%s %s in %s, %dB, tokens %d/%d, session=%s text=%s", e.Provider, e.Model, time.Duration(e.DurationMs)*time.Millisecond, e.ReplyBytes, e.InputTokens, e.OutputTokens, short(e.SessionID), quoted(e.Text, 200))
	case domain.ProviderFailed:
		s := fmt.Sprintf("%s class=%s %s", e.Provider, e.Class, quoted(e.Message, 160))
		if e.RetryFullContext {
			s += " (retrying with full context)"
		}
		return s
	case domain.ReplyReady:
		return quoted(e.Text, 200)
	case domain.TurnSuppressed:
		return e.Reason
	case domain.ReplySent:
		return fmt.Sprintf("kind=%s chunks=%d plain=%v", e.Kind, e.Chunks, e.PlainText)
	case domain.ReplyFailed:
		return fmt.Sprintf("kind=%s class=%s %s", e.Kind, e.Class, quoted(e.Error, 120))
	case domain.AttachmentsRemoved:
		return fmt.Sprintf("%d file(s)", len(e.Paths))
	case domain.TurnCompleted:
		return fmt.Sprintf("status=%s in %s", e.Status, time.Duration(e.DurationMs)*time.Millisecond)
	case domain.MarkersApplied:
		parts := make([]string, len(e.Markers))
		for i, m := range e.Markers {
			parts[i] = m.Name + ": " + m.Effect
		}
		s := strings.Join(parts, "; ")
		if e.Step > 0 {
			s = fmt.Sprintf("step %d: %s", e.Step, s)
		}
		return s
	case domain.ConversationClosed:
		return "conversation=" + short(e.ConversationID)
	case domain.RouteDecided:
		return routeSummary(e)
	case domain.PlanStepCompleted:
		return fmt.Sprintf("step %d %s -> %s", e.Index, quoted(e.Text, 60), quoted(e.Reply, 160))
	case domain.PlanStepFailed:
		return fmt.Sprintf("step %d attempt %d class=%s %s", e.Index, e.Attempt, e.Class, quoted(e.Message, 120))
	case domain.PlanProgressSent:
		s := "announced " + quoted(e.Text, 160)
		if e.Index > 0 {
			s = fmt.Sprintf("step %d %s", e.Index, quoted(e.Text, 80))
		}
		return s + errSuffix(e.Error)
	case domain.TaskScheduled:
		return fmt.Sprintf("%s %s due=%s repeat=%s %s", e.Kind, short(e.ID), e.Due.Format(time.RFC3339), e.Repeat, quoted(e.Description, 80))
	case domain.TaskCancelled:
		return short(e.ID) + " by " + e.Reason
	case domain.TaskUpdated:
		return short(e.ID) + " " + quoted(e.Description, 80)
	case domain.Welcomed:
		return "language=" + e.Language
	case domain.SessionStarted:
		return fmt.Sprintf("project=%q session=%s", e.Project, short(e.SessionID))
	case domain.SessionCleared:
		return fmt.Sprintf("project=%q %s", e.Project, e.Reason)
	case domain.FactRecorded:
		return e.Key + "=" + quoted(e.Value, 60)
	case domain.LanguageSwitched:
		return e.From + " -> " + e.To
	}
	b, _ := json.Marshal(p)
	return string(b)
}

func routeSummary(e domain.RouteDecided) string {
	if !e.Direct {
		return fmt.Sprintf("plan of %d steps model=%s: %s", len(e.Steps), e.Model, strings.Join(e.Steps, " | "))
	}
	s := "direct model=" + e.Model
	if e.Error != "" {
		return s + " (classification failed: " + quoted(e.Error, 120) + ")"
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
