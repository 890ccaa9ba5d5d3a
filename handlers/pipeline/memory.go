package pipeline

import (
	"context"
	"fmt"

	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
)

// closeStaleSession ends the provider session of a conversation that went
// idle: a new conversation starts a fresh session with the summaries
// instead of resuming the old one, even when the summarizer has not closed
// the old conversation yet (it clears the session too, when it does).
func (d *Driver) closeStaleSession(ctx context.Context, st *turnState, sessions map[string]string, built turn.ContextBuilt) error {
	if st.Received.Task != nil || built.ConversationID != st.ID || sessions[built.Project] == "" {
		return nil
	}
	if err := d.clearSession(ctx, st, built.Project, "conversation idle"); err != nil {
		return fmt.Errorf("close the idle conversation's session: %w", err)
	}
	return nil
}

// chatSessions are the provider sessions the turn's chat continues, by
// project: the sender's own in a private chat; in a group chat the
// group's, which every member's turns there share and no private turn
// resumes.
func (d *Driver) chatSessions(ctx context.Context, m *turn.MessageReceived, profile sender.SenderProfile) (map[string]string, error) {
	chat := m.Chat()
	if chat == m.Sender() {
		return profile.Sessions, nil
	}
	group, err := d.Senders.Load(ctx, chat.Channel, chat.ID)
	if err != nil {
		return nil, fmt.Errorf("read the sessions of %s: %w", chat.Key(), err)
	}
	return group.Sessions, nil
}
