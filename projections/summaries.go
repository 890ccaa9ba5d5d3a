package projections

import (
	"context"
	"fmt"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/summary"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/projections/readmodel"
)

// Summaries is the read model of closed conversations' summaries, the
// "recent summaries" a later turn's context recalls.
type Summaries struct{}

func (Summaries) Name() string     { return "summaries" }
func (Summaries) Tables() []string { return []string{"summaries"} }
func (Summaries) Schema(_ readmodel.Dialect, t func(string) string) []string {
	return []string{
		fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
			conversation_id TEXT PRIMARY KEY,
			sender          TEXT NOT NULL,
			project         TEXT NOT NULL,
			summary         TEXT NOT NULL,
			messages        BIGINT NOT NULL,
			reason          TEXT NOT NULL,
			closed_at       BIGINT NOT NULL
		)`, t("summaries")),
		fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON %s (sender, project, closed_at)`, t("summaries_by_sender"), t("summaries")),
	}
}

func (Summaries) Apply(ctx context.Context, tx *readmodel.Tx, e domain.Event) error {
	if e.Type != (turn.ConversationClosed{}).EventType() || summary.ConversationIDFromSummaryStream(e.StreamID) == "" {
		return nil
	}
	p, err := tx.Decode(e)
	if err != nil {
		return err
	}
	ev := p.(turn.ConversationClosed)
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`INSERT INTO %s (conversation_id, sender, project, summary, messages, reason, closed_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (conversation_id) DO NOTHING`, tx.T("summaries")),
		ev.ConversationID, ev.Sender, ev.Project, ev.Summary, ev.Messages, ev.Reason, e.RecordedAt.UnixMicro()); err != nil {
		return fmt.Errorf("summaries: apply %s of %s: %w", e.Type, ev.ConversationID, err)
	}
	return nil
}
