package summary

import (
	"errors"
	"fmt"
	"strings"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/domain/usage"
)

// SummaryStream is the stream of one conversation's summarization: the
// claim, each provider reply and the closure, so that a crash resumes
// where it stopped and a reply on record is never asked for again.
func SummaryStream(conversationID string) string { return "summary-" + conversationID }

// ConversationIDFromSummaryStream returns the conversation of a summary
// stream, or "".
func ConversationIDFromSummaryStream(stream string) string {
	id, _ := strings.CutPrefix(stream, "summary-")
	if id == stream {
		return ""
	}
	return id
}

// Summary events, in the order a summarization records them.
type (
	// SummaryRequested claims the conversation for summarization. It is
	// appended to an empty stream only, so one process wins.
	SummaryRequested struct {
		ConversationID string `json:"conversation_id"`
		Channel        string `json:"channel"`
		SenderID       string `json:"sender_id"`
		Project        string `json:"project,omitempty"`
		Messages       int    `json:"messages"`
		Reason         string `json:"reason"` // "idle" or "shutdown"
	}
	// SummaryWritten is the outcome of the SUMMARIZE call: the model's
	// summary or, when the call failed, the fallback and why.
	SummaryWritten struct {
		Text     string `json:"text"`
		Fallback bool   `json:"fallback,omitempty"`
		Error    string `json:"error,omitempty"`
		// Usage is the summary call's, when one was made (absent before
		// usage was recorded here).
		Usage *usage.CallUsage `json:"usage,omitempty"`
	}
	// FactsExtracted is the outcome of the FACTS call: the raw reply and
	// what the validation accepted and rejected. Accepted facts are
	// recorded on the sender stream as FactRecorded.
	FactsExtracted struct {
		Raw      string           `json:"raw,omitempty"`
		Accepted []FactCandidate  `json:"accepted,omitempty"`
		Rejected []RejectedFact   `json:"rejected,omitempty"`
		Error    string           `json:"error,omitempty"`
		Usage    *usage.CallUsage `json:"usage,omitempty"` // the FACTS call's, when one was made
	}
)

// FactCandidate is one "key: value" line of a FACTS reply.
type FactCandidate struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// RejectedFact is a candidate the validation turned down, and why.
type RejectedFact struct {
	Line   string `json:"line"`
	Reason string `json:"reason"`
}

func (SummaryRequested) EventType() string { return "SummaryRequested" }
func (SummaryWritten) EventType() string   { return "SummaryWritten" }
func (FactsExtracted) EventType() string   { return "FactsExtracted" }

// RegisterSummaryEvents adds the summary events to a registry.
func RegisterEvents(r *domain.Registry) {
	for _, p := range []domain.Payload{SummaryRequested{}, SummaryWritten{}, FactsExtracted{}} {
		r.Register(p, 1)
	}
}

// EmptyConversationSummary is what an empty conversation is closed with.
const EmptyConversationSummary = "(empty conversation)"

// FallbackSummary stands in for a summary the model could not write.
func FallbackSummary(messages int) string {
	return fmt.Sprintf("(%d messages, summary unavailable)", messages)
}

// SummaryStep is the next thing a summarization must do.
type SummaryStep int

const (
	SummaryStepClaim     SummaryStep = iota // record SummaryRequested
	SummaryStepSummarize                    // call the model with SUMMARIZE
	SummaryStepFacts                        // call the model with FACTS
	SummaryStepClose                        // record facts, clear the session, close
	SummaryStepDone
)

// Summarization is the folded state of a summary stream.
type Summarization struct {
	Requested *SummaryRequested
	Written   *SummaryWritten
	Facts     *FactsExtracted
	Closed    *turn.ConversationClosed
}

// Apply folds one event.
func (s *Summarization) Apply(p domain.Payload) {
	switch ev := p.(type) {
	case SummaryRequested:
		s.Requested = &ev
	case SummaryWritten:
		s.Written = &ev
	case FactsExtracted:
		s.Facts = &ev
	case turn.ConversationClosed:
		s.Closed = &ev
	}
}

// Next decides the single next step. An empty conversation goes straight
// to closure: there is nothing to ask a model about.
func (s *Summarization) Next() SummaryStep {
	switch {
	case s.Closed != nil:
		return SummaryStepDone
	case s.Requested == nil:
		return SummaryStepClaim
	case s.Requested.Messages == 0:
		return SummaryStepClose
	case s.Written == nil:
		return SummaryStepSummarize
	case s.Facts == nil:
		return SummaryStepFacts
	}
	return SummaryStepClose
}

// Summary is the text the conversation is closed with.
func (s *Summarization) Summary() string {
	if s.Written != nil {
		return s.Written.Text
	}
	return EmptyConversationSummary
}

// Transcript renders a conversation as the plain text the SUMMARIZE and
// FACTS prompts are followed by.
func Transcript(msgs []turn.HistoryMessage) string {
	var b strings.Builder
	for _, m := range msgs {
		who := "User"
		if m.Role == "assistant" {
			who = "Assistant"
		}
		fmt.Fprintf(&b, "%s: %s\n", who, m.Text)
	}
	return strings.TrimRight(b.String(), "\n")
}

// ErrReservedFact rejects keys the system manages itself.
var ErrReservedFact = errors.New("reserved fact key")

// reservedFactKeys are kept by omega itself; the FACTS prompt tells the
// model not to extract them, and a model that does is not believed.
var reservedFactKeys = map[string]bool{
	"welcomed": true, "preferred_language": true, "active_project": true, "personality": true,
}

// IsValidFact applies the seed's is_valid_fact rules (short keys and
// values, no numeric-only keys or values, no prices, no table rows) and
// refuses keys the system manages. It returns why a fact is rejected.
func IsValidFact(key, value string) error {
	key = sender.NormalizeFactKey(key)
	if reservedFactKeys[key] {
		return fmt.Errorf("%w: %s", ErrReservedFact, key)
	}
	return sender.ValidateFact(key, value)
}

// ParseFacts reads a FACTS reply: one "key: value" per line, or "none".
// Lines without a colon are not facts and are ignored (models add
// preambles); candidates that fail IsValidFact are returned with the
// reason, a secret's line with its value masked.
func ParseFacts(reply string) ([]FactCandidate, []RejectedFact) {
	x := ExtractFacts(reply)
	return x.Accepted, x.Rejected
}

// ExtractFacts is the FactsExtracted a FACTS reply records: its facts, its
// refusals, and the reply itself with every secret masked, so that the
// record of a refused secret never holds it.
func ExtractFacts(reply string) FactsExtracted {
	out := FactsExtracted{Raw: reply}
	if strings.EqualFold(strings.Trim(strings.TrimSpace(reply), ".`*"), "none") {
		return out
	}
	lines := strings.Split(reply, "\n")
	for i, raw := range lines {
		line := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(raw), "-*• "))
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			lines[i] = sender.MaskSecrets(raw)
			continue
		}
		key, value = sender.NormalizeFactKey(strings.Trim(key, "`* ")), strings.TrimSpace(value)
		err := IsValidFact(key, value)
		switch {
		case errors.Is(err, sender.ErrFactSecret):
			line = key + ": " + sender.SecretMask
			lines[i] = line
		case err != nil:
			lines[i] = sender.MaskSecrets(raw)
		}
		if err != nil {
			out.Rejected = append(out.Rejected, RejectedFact{Line: sender.MaskSecrets(line), Reason: err.Error()})
			continue
		}
		out.Accepted = append(out.Accepted, FactCandidate{Key: key, Value: value})
	}
	out.Raw = strings.Join(lines, "\n")
	return out
}

// FactsAccepted lists the facts the extraction accepted.
func (s *Summarization) FactsAccepted() []FactCandidate {
	if s.Facts == nil {
		return nil
	}
	return s.Facts.Accepted
}

// ProviderCall is the provider call the event records.
func (e SummaryWritten) ProviderCall() (usage.ProviderCall, bool) {
	return usage.OptionalCall(usage.PurposeSummary, e.Usage, e.Fallback)
}

// ProviderCall is the provider call the event records.
func (e FactsExtracted) ProviderCall() (usage.ProviderCall, bool) {
	return usage.OptionalCall(usage.PurposeFacts, e.Usage, e.Error != "")
}
