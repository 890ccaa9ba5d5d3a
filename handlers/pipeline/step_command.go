package pipeline

import (
	"context"
	"log/slog"

	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
)

func (d *Driver) command(ctx context.Context, st *turnState, profile sender.SenderProfile, log *slog.Logger) error {
	stop := d.typing(ctx, st, log)
	ans, err := d.Commands.Answer(ctx, &st.Turn, profile)
	stop()
	if err != nil {
		return err
	}
	st.add(ans.Events...)
	st.add(turn.CommandAnswered{Command: ans.Command, Reply: ans.Reply})
	return nil
}

// ChatAnswers is a CommandHook that also answers some plain messages
// itself (a yes to a question it asked); it must keep saying so for a
// turn whose answer it recorded.
type ChatAnswers interface {
	AnswersChat(ctx context.Context, tn *turn.Turn) bool
}

// isCommand reports whether the turn is answered by the command hook.
func (d *Driver) isCommand(ctx context.Context, t *turn.Turn) bool {
	if d.Commands == nil || t.Received.Task != nil {
		return false
	}
	if d.Commands.IsCommand(t.Received.Text) {
		return true
	}
	c, ok := d.Commands.(ChatAnswers)
	return ok && c.AnswersChat(ctx, t)
}
