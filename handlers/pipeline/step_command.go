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
