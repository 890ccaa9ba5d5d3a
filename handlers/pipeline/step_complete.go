package pipeline

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/projections"
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
	d.keepExchange(ctx, st, log)
	return nil
}

// keepExchange keeps the exchange the turn adds to its conversation for
// the chat's next turn (Driver.Exchanges); without it, that turn waits for
// the read model to show this one.
func (d *Driver) keepExchange(ctx context.Context, st *turnState, log *slog.Logger) {
	evs, err := d.Store.Load(ctx, domain.TurnStream(st.ID), 1)
	if err != nil {
		log.Warn("read the completed turn's exchange; the next turn waits for the read model", "err", err)
		return
	}
	x, ok, err := projections.ExchangeOf(d.Registry, st.Received.Chat().Key(), evs)
	if err != nil {
		log.Warn("read the completed turn's exchange; the next turn waits for the read model", "err", err)
		return
	}
	if ok {
		d.Exchanges.Add(x)
	}
}
