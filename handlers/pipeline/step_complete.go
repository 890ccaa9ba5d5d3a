package pipeline

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
)

func (d *Driver) removeAttachments(st *turnState, log *slog.Logger) []string {
	var removed []string
	for _, a := range st.Received.Attachments {
		if err := os.Remove(a.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
			log.Warn("could not remove attachment", "path", a.Path, "err", err)
			continue
		}
		removed = append(removed, a.Path)
	}
	if len(st.Received.Attachments) > 0 {
		_ = os.Remove(filepath.Dir(st.Received.Attachments[0].Path)) // the turn's inbox folder, if now empty
	}
	return removed
}

func (d *Driver) complete(ctx context.Context, st *turnState, _ sender.SenderProfile, log *slog.Logger) error {
	st.add(turn.TurnCompleted{Status: st.Outcome(), DurationMs: d.now().Sub(st.Received.ReceivedAt).Milliseconds()})
	if err := d.flush(ctx, st); err != nil {
		return err
	}
	log.Info("turn completed", "status", st.Outcome())
	return nil
}
