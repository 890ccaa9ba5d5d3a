package pipeline

import (
	"context"
	"log/slog"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain/promptctx"
	"github.com/omega-gateway/omega/domain/sender"
)

func (d *Driver) addContext(ctx context.Context, st *turnState, profile sender.SenderProfile, log *slog.Logger) error {
	sessions, err := d.chatSessions(ctx, st.Received, profile)
	if err != nil {
		return err
	}
	gathered, err := d.gatherer.Gather(ctx, promptctx.Gathered{
		TurnID: st.ID, Received: st.Received, Profile: profile,
		Language: d.language(st, profile), Now: d.now(), Location: d.Config.Location,
		Session:      sessions[profile.ActiveProject],
		PlatformHint: d.formatHint(st.Received.Channel),
		ModelFast:    d.Config.ModelFast, ModelComplex: d.Config.ModelComplex,
	})
	if err != nil {
		return err
	}
	built := promptctx.Assemble(gathered)
	if err := d.closeStaleSession(ctx, st, sessions, built); err != nil {
		return err
	}
	if err := d.recordContext(ctx, st, built); err != nil {
		return err
	}
	d.snapshotImages(ctx, st, log)
	return nil
}

func (d *Driver) language(st *turnState, profile sender.SenderProfile) string {
	return promptctx.ReplyLanguage(profile, st.Received.Text)
}

// formatHint is how the channel wants replies formatted, if it says.
func (d *Driver) formatHint(channel string) string {
	if ch, ok := d.Channels.Channel(channel); ok {
		if h, ok := ch.(channels.FormatHinter); ok {
			return h.FormatHint()
		}
	}
	return ""
}
