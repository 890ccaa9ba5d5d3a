package apply

import (
	"cmp"
	"context"
	"fmt"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/catalog"
	"github.com/omega-gateway/omega/domain/heartbeat"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/learning"
	"github.com/omega-gateway/omega/domain/markers"
	"github.com/omega-gateway/omega/domain/system"
	"github.com/omega-gateway/omega/eventstore"
)

// Owner delivers omega's own notices to its owner: the heartbeat's
// destination (OMEGA_HEARTBEAT_TARGET, else the first allowlisted Telegram
// user, else the first WhatsApp number).
type Owner interface {
	// Alert sends text to the owner and says where it went; an error when
	// there is no owner or the send failed.
	Alert(ctx context.Context, text string) (channel, chat string, err error)
}

// alertOwner tells the owner about a report of this marker and records
// the outcome on the report's stream, keyed by the marker: a turn that
// runs its markers again after a crash does not alert again once the
// outcome is on record (a crash between the send and its record sends the
// alert twice rather than never).
func (h *Markers) alertOwner(ctx context.Context, md domain.Metadata, stream, kind, text string) (string, error) {
	if h.Owner == nil {
		return "no owner to alert", nil
	}
	md.CausationID += "/alert"
	noop := func() eventstore.Aggregate { return &learning.Limitations{} }
	sent, err := h.Once(ctx, stream, md, noop, func() ([]domain.Payload, error) { return nil, nil })
	if err != nil || sent {
		return "owner alerted (already recorded)", err
	}
	ch, chat, err := h.Owner.Alert(ctx, text)
	out := system.OwnerAlerted{Kind: kind, Text: text, Channel: ch, Chat: chat}
	effect := "owner alerted"
	if err != nil {
		h.Logger.Warn("owner alert not delivered", "kind", kind, "err", err)
		out.Error, effect = err.Error(), "owner alert failed"
	}
	if _, err := h.Once(ctx, stream, md, noop, func() ([]domain.Payload, error) { return []domain.Payload{out}, nil }); err != nil {
		return "", fmt.Errorf("record the owner alert: %w", err)
	}
	return effect, nil
}

func applyBugReport(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, v markers.BugReport) (markers.AppliedMarker, error) {
	am, fresh, err := onStreamFresh(ctx, h, md, learning.BugReportsStream, newSkill, "bug reported", func(*catalog.Skill) []domain.Payload {
		return []domain.Payload{learning.BugReported{Description: v.Description, Sender: run.sender}}
	})
	if err != nil || !fresh {
		return am, err
	}
	who := cmp.Or(run.turn.Received.SenderName, run.sender)
	effect, err := h.alertOwner(ctx, md, learning.BugReportsStream, markers.NameBugReport, i18n.Alert(run.lang, i18n.AlertBugReport, who, v.Description))
	am.Effect += ", " + effect
	return am, err
}

// applyLimitation records a new limitation, adds it to the heartbeat
// checklist (so the check-ins keep it in view until it is removed) and
// alerts the owner, as the seed's LIMITATION does.
func applyLimitation(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, v markers.Limitation) (markers.AppliedMarker, error) {
	am, fresh, err := onStreamFresh(ctx, h, md, learning.LimitationsStream, newLimitations, "limitation "+v.Title, func(l *learning.Limitations) []domain.Payload {
		return l.Report(v.Title, v.Description, v.Plan)
	})
	if err != nil || !fresh {
		return am, err
	}
	item := LimitationItem(v.Title)
	hmd := md
	hmd.CausationID += "/heartbeat"
	if _, err := h.heartbeat(ctx, run, hmd, func(hb *heartbeat.Heartbeat) ([]domain.Payload, error) { return hb.Add(item), nil }); err != nil {
		return am, err
	}
	plan := cmp.Or(v.Plan, "-")
	effect, err := h.alertOwner(ctx, md, learning.LimitationsStream, markers.NameLimitation, i18n.Alert(run.lang, i18n.AlertLimitation, v.Title, v.Description, plan))
	am.Effect += ", heartbeat item added, " + effect
	return am, err
}

// LimitationItem is the heartbeat checklist item of a limitation.
func LimitationItem(title string) string { return "Limitation: " + title }

// onStreamFresh is onStream that also reports whether the decision is
// this marker's (recorded now or by an earlier run of the same turn), not
// "nothing new" (a report already made by another turn).
func onStreamFresh[S eventstore.Aggregate](ctx context.Context, h *Markers, md domain.Metadata, stream string, fresh func() S, effect string, decide func(S) []domain.Payload) (markers.AppliedMarker, bool, error) {
	done, decided, err := decideOnStream(ctx, h, md, stream, fresh, decide)
	switch {
	case err != nil:
		return markers.AppliedMarker{}, false, err
	case done:
		return markers.AppliedMarker{Effect: effect + " (already recorded)", Stream: stream}, true, nil
	case decided == 0:
		return markers.AppliedMarker{Effect: effect + ": nothing new", Stream: stream}, false, nil
	}
	return markers.AppliedMarker{Effect: effect, Stream: stream}, true, nil
}
