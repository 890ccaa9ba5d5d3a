package webui

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/markers"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/domain/usage"
	"github.com/omega-gateway/omega/handlers/promptstore"
)

// timelineEntry is one event of a turn as the page shows it.
type timelineEntry struct {
	Rel     string // since the turn's first event
	At      time.Time
	Type    string
	Class   string // for colour: auth-ok, auth-denied, provider, failed, reply, ...
	Summary string
	Markers []markers.AppliedMarker
	Texts   []foldedText
}

// foldedText is a labelled text; long ones start folded.
type foldedText struct {
	Label  string
	Text   string
	Folded bool
}

func text(label, s string) foldedText {
	return foldedText{Label: label, Text: s, Folded: len(s) > 400 || strings.Count(s, "\n") > 8}
}

func (s *Server) timeline(ctx context.Context, evs []domain.Event) []timelineEntry {
	out := make([]timelineEntry, 0, len(evs))
	start := evs[0].RecordedAt
	var sent turn.SentTexts
	for _, e := range evs {
		en := timelineEntry{At: e.RecordedAt, Type: e.Type, Rel: "+" + e.RecordedAt.Sub(start).Round(time.Millisecond).String()}
		p, err := s.decoder.Decode(e)
		if err == nil {
			p = sent.Fill(p) // a reply sent as it was ready leaves its text to ReplyReady
		}
		if c, ok := p.(turn.ContextBuilt); ok && err == nil {
			// Recorded by reference: shown in full, as the provider got it.
			p, err = promptstore.Resolve(ctx, s.log, s.decoder, domain.TurnIDFromStream(e.StreamID), c)
		}
		if err != nil {
			en.Class, en.Summary = "failed", "cannot decode: "+err.Error()
			en.Texts = append(en.Texts, text("data", string(e.Data)))
		} else {
			describe(&en, p, e)
		}
		out = append(out, en)
	}
	return out
}

// describe fills the entry for the payload: what a person needs to see to
// answer "why did the bot say this?".
func describe(en *timelineEntry, p domain.Payload, e domain.Event) {
	if describeInput(en, p) || describeCall(en, p) || describeOutcome(en, p) || describeImages(en, p) {
		return
	}
	var pretty strings.Builder
	raw := map[string]any{}
	if json.Unmarshal(e.Data, &raw) == nil {
		b, _ := json.MarshalIndent(raw, "", "  ")
		pretty.Write(b)
	} else {
		pretty.Write(e.Data)
	}
	en.Class = "other"
	en.Texts = append(en.Texts, text("data", pretty.String()))
}

// describeInput describes the message, the auth decision and the context.
func describeInput(en *timelineEntry, p domain.Payload) bool {
	switch ev := p.(type) {
	case turn.MessageReceived:
		en.Class = "input"
		en.Summary = fmt.Sprintf("message from %s:%s", ev.Channel, ev.SenderID)
		if ev.SenderName != "" {
			en.Summary += " (" + ev.SenderName + ")"
		}
		if len(ev.Attachments) > 0 {
			en.Summary += fmt.Sprintf(", %d attachment(s)", len(ev.Attachments))
		}
		if ev.Task != nil {
			en.Summary += ", scheduled task " + ev.Task.ID
		}
		en.Texts = append(en.Texts, text("message", ev.Text))
	case turn.AccessGranted:
		en.Class, en.Summary = "auth-ok", "access granted: "+ev.Reason
	case turn.AccessDenied:
		en.Class, en.Summary = "auth-denied", "access denied: "+ev.Reason
	case turn.CommandAnswered:
		en.Class, en.Summary = "reply", "command /"+ev.Command
		en.Texts = append(en.Texts, text("reply", ev.Reply))
	case turn.ContextBuilt:
		en.Class = "context"
		en.Summary = fmt.Sprintf("context for %s: sections %s; %d facts, %d history messages", ev.Model, strings.Join(ev.SectionsUsed, ", "), ev.FactsCount, len(ev.History))
		if ev.SessionID != "" {
			en.Summary += "; resumes session " + ev.SessionID
		}
		if len(ev.SanitizeWarnings) > 0 {
			en.Summary += "; sanitize: " + strings.Join(ev.SanitizeWarnings, ", ")
		}
		en.Texts = append(en.Texts, foldedText{Label: "system prompt", Text: ev.System, Folded: true},
			foldedText{Label: "prompt", Text: ev.Prompt, Folded: true})
	default:
		return false
	}
	return true
}

// describeCall describes the route, provider calls and plan steps.
func describeCall(en *timelineEntry, p domain.Payload) bool {
	switch ev := p.(type) {
	case turn.RouteDecided:
		en.Class = "context"
		if ev.Direct {
			en.Summary = "route: answer directly"
		} else {
			en.Summary = fmt.Sprintf("route: plan of %d steps on %s", len(ev.Steps), ev.Model)
		}
		if ev.Error != "" {
			en.Summary += " (classification failed: " + ev.Error + ")"
		}
		if ev.Prefilter {
			en.Summary += " (pre-filter: no classification call)"
		}
		if ev.Usage != nil {
			en.Summary += " (" + callCost(ev.Usage) + ")"
		}
		if len(ev.Steps) > 0 {
			en.Texts = append(en.Texts, text("steps", strings.Join(ev.Steps, "\n")))
		}
	case turn.ProviderCalled:
		en.Class = "provider"
		en.Summary = fmt.Sprintf("calling %s, model %s, attempt %d", ev.Provider, ev.Model, ev.Attempt)
	case turn.ProviderReplied:
		en.Class = "provider"
		u := ev.Usage()
		en.Summary = fmt.Sprintf("%s replied (model %s, %s)", ev.Provider, ev.Model, callCost(&u))
		en.Texts = append(en.Texts, foldedText{Label: "raw reply", Text: ev.Text, Folded: len(ev.Text) > 4000})
	case turn.ProviderFailed:
		en.Class = "failed"
		en.Summary = fmt.Sprintf("%s failed: %s, %s (%s)", ev.Provider, ev.Class, ev.Message, time.Duration(ev.DurationMs)*time.Millisecond)
	case turn.PlanStepCompleted:
		en.Class = "provider"
		en.Summary = fmt.Sprintf("step %d done: %s", ev.Index, ev.Text)
		if ev.Usage != nil {
			en.Summary += " (" + callCost(ev.Usage) + ")"
		}
		en.Texts = append(en.Texts, text("step reply", ev.Reply))
	case turn.PlanStepFailed:
		en.Class = "failed"
		en.Summary = fmt.Sprintf("step %d attempt %d failed: %s, %s", ev.Index, ev.Attempt, ev.Class, ev.Message)
	default:
		return false
	}
	return true
}

// describeOutcome describes markers, replies and the completion.
func describeOutcome(en *timelineEntry, p domain.Payload) bool {
	switch ev := p.(type) {
	case turn.MarkersApplied:
		en.Class, en.Summary, en.Markers = "markers", fmt.Sprintf("%d marker(s)", len(ev.Markers)), ev.Markers
	case turn.ReplyReady:
		en.Class, en.Summary = "reply", "reply ready"
		en.Texts = append(en.Texts, text("reply", ev.Text))
	case turn.ReplySent:
		en.Class = "reply"
		en.Summary = fmt.Sprintf("%s sent in %d chunk(s)", ev.Kind, ev.Chunks)
		en.Texts = append(en.Texts, text("sent", ev.Text))
	case turn.ReplyFailed:
		en.Class, en.Summary = "failed", fmt.Sprintf("%s not sent: %s, %s", ev.Kind, ev.Class, ev.Error)
	case turn.ReplyStreamStarted:
		en.Class, en.Summary = "reply", streamSummary(ev)
	case turn.TurnSuppressed:
		en.Class, en.Summary = "other", "suppressed: "+ev.Reason
	case turn.TurnCompleted:
		en.Class = "done"
		en.Summary = fmt.Sprintf("completed: %s in %s", ev.Status, time.Duration(ev.DurationMs)*time.Millisecond)
	default:
		return false
	}
	return true
}

// streamSummary says when a streamed reply began to show, and where.
func streamSummary(ev turn.ReplyStreamStarted) string {
	s := "reply began to show"
	if ev.VisibleMs > 0 {
		s += fmt.Sprintf(" %s after the message", time.Duration(ev.VisibleMs)*time.Millisecond)
	}
	if ev.PreviewID != "" {
		s += " in preview message " + ev.PreviewID
	}
	return s
}

// callCost says what a call took and cost; tokens the provider did not
// report are said to be so, never shown as zero.
func callCost(u *usage.CallUsage) string {
	if u == nil {
		return ""
	}
	s := fmt.Sprintf("%s, %d B prompt, %d B reply", time.Duration(u.DurationMs)*time.Millisecond, u.PromptBytes, u.ReplyBytes)
	if !u.UsageReported {
		return s + ", tokens not reported"
	}
	s += fmt.Sprintf(", %d in / %d out tokens", u.InputTokens, u.OutputTokens)
	if u.CacheReadTokens+u.CacheWriteTokens > 0 {
		s += fmt.Sprintf(" (cache %d read, %d written)", u.CacheReadTokens, u.CacheWriteTokens)
	}
	if u.CostUSD > 0 {
		s += fmt.Sprintf(", $%.4f", u.CostUSD)
	}
	return s
}
