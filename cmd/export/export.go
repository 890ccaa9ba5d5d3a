// Package export writes a sender's conversations from the event log: a
// readable Markdown transcript, or JSON lines with times, models and
// tokens for programs.
package export

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
)

// Log is where turns are read from.
type Log interface {
	Load(ctx context.Context, stream string, fromVersion int64) ([]domain.Event, error)
}

// Decoder decodes events (domain.Registry).
type Decoder interface {
	Decode(e domain.Event) (domain.Payload, error)
}

// Message is one line of a transcript.
type Message struct {
	TurnID         string    `json:"turn_id"`
	ConversationID string    `json:"conversation_id,omitempty"`
	At             time.Time `json:"at"`
	// Role is who the text is from: user (the sender), assistant (omega)
	// or task (a scheduled action that fell due, not something the
	// sender wrote).
	Role string `json:"role"`
	// Kind says what an assistant message that was not a reply is:
	// reminder, heartbeat_alert, self_heal or owner_alert; empty for
	// replies and messages.
	Kind         string   `json:"kind,omitempty"`
	Text         string   `json:"text"`
	Status       string   `json:"status,omitempty"`
	Provider     string   `json:"provider,omitempty"`
	Model        string   `json:"model,omitempty"`
	InputTokens  *int     `json:"input_tokens,omitempty"`
	OutputTokens *int     `json:"output_tokens,omitempty"`
	CostUSD      *float64 `json:"cost_usd,omitempty"`
}

// Roles of a message.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTask      = "task"
)

// Messages reads the turns' messages and replies, in order.
func Messages(ctx context.Context, log Log, dec Decoder, turnIDs []string) ([]Message, error) {
	var out []Message
	for _, id := range turnIDs {
		evs, err := log.Load(ctx, domain.TurnStream(id), 1)
		if err != nil {
			return nil, fmt.Errorf("load turn %s: %w", id, err)
		}
		user, bot := Message{TurnID: id, Role: "user"}, Message{TurnID: id, Role: "assistant"}
		var sent turn.SentTexts
		for _, e := range evs {
			p, err := dec.Decode(e)
			if err != nil {
				return nil, fmt.Errorf("decode %s of turn %s: %w", e.Type, id, err)
			}
			take(&user, &bot, sent.Fill(p), e.RecordedAt.UTC())
		}
		out = append(out, user)
		if bot.Text != "" {
			out = append(out, bot)
		}
	}
	return out, nil
}

// take records what one event of a turn says of its message and reply.
func take(user, bot *Message, p domain.Payload, at time.Time) {
	switch ev := p.(type) {
	case turn.MessageReceived:
		user.At, user.Text = at, ev.Text
		if ev.Task != nil {
			user.Role = RoleTask
		}
	case turn.ContextBuilt:
		user.ConversationID, bot.ConversationID = ev.ConversationID, ev.ConversationID
	case turn.ProviderReplied:
		bot.Provider, bot.Model = ev.Provider, ev.Model
		if u := ev.Usage(); u.UsageReported {
			in, out := u.InputTokens, u.OutputTokens
			bot.InputTokens, bot.OutputTokens = &in, &out
			if u.CostUSD > 0 {
				c := u.CostUSD
				bot.CostUSD = &c
			}
		}
	case turn.ReplyReady:
		bot.At, bot.Text = at, ev.Text
	case turn.CommandAnswered:
		bot.At, bot.Text = at, ev.Reply
	case turn.ReplySent:
		// What was sent, confirmations of markers included.
		bot.At, bot.Text = at, ev.Text
	case turn.TurnCompleted:
		bot.Status = ev.Status
		if bot.At.IsZero() {
			bot.At = at
		}
	}
}

// JSONL writes one JSON object per message.
func JSONL(w io.Writer, msgs []Message) error {
	enc := json.NewEncoder(w)
	for _, m := range msgs {
		if err := enc.Encode(m); err != nil {
			return err
		}
	}
	return nil
}

// Markdown writes a readable transcript, a heading per conversation.
func Markdown(w io.Writer, title string, msgs []Message) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n", title)
	conv := "\x00"
	for _, m := range msgs {
		if m.ConversationID != conv {
			conv = m.ConversationID
			fmt.Fprintf(&b, "\n## Conversation %s\n", orDash(conv))
		}
		who := author(title, m)
		fmt.Fprintf(&b, "\n%s · %s\n\n%s\n", who, m.At.Format("2006-01-02 15:04:05 UTC"), quote(m.Text))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// author is the line that says who a message is from.
func author(title string, m Message) string {
	switch m.Role {
	case RoleAssistant:
		who := "**omega**"
		if detail := cmp.Or(kindNames[m.Kind], m.Model); detail != "" {
			who += " (" + detail + ")"
		}
		return who
	case RoleTask:
		return "**scheduled task**"
	}
	return "**" + title + "**"
}

var kindNames = map[string]string{
	KindReminder: "reminder", KindHeartbeatAlert: "heartbeat alert", KindSelfHeal: "self-healing", KindOwnerAlert: "alert",
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// quote makes the text a block quote, so its own Markdown cannot break the
// transcript's structure.
func quote(s string) string {
	return "> " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n> ")
}
