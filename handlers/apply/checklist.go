package apply

import (
	"cmp"
	"context"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/heartbeat"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/markers"
)

func applyHeartbeatAdd(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, v markers.HeartbeatAdd) (markers.AppliedMarker, error) {
	return h.heartbeat(ctx, run, md, func(hb *heartbeat.Heartbeat) ([]domain.Payload, error) { return hb.Add(v.Item), nil })
}

func applyHeartbeatRemove(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, v markers.HeartbeatRemove) (markers.AppliedMarker, error) {
	return h.heartbeat(ctx, run, md, func(hb *heartbeat.Heartbeat) ([]domain.Payload, error) { return hb.Remove(v.Item), nil })
}

func applyHeartbeatSuppress(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, v markers.HeartbeatSuppressSection) (markers.AppliedMarker, error) {
	return h.heartbeat(ctx, run, md, func(hb *heartbeat.Heartbeat) ([]domain.Payload, error) { return hb.Suppress(v.Section), nil })
}

func applyHeartbeatUnsuppress(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, v markers.HeartbeatUnsuppressSection) (markers.AppliedMarker, error) {
	return h.heartbeat(ctx, run, md, func(hb *heartbeat.Heartbeat) ([]domain.Payload, error) { return hb.Unsuppress(v.Section), nil })
}

func applyHeartbeatInterval(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, v markers.HeartbeatInterval) (markers.AppliedMarker, error) {
	var refused bool
	am, err := h.heartbeat(ctx, run, md, func(hb *heartbeat.Heartbeat) ([]domain.Payload, error) {
		ps, err := hb.SetInterval(v.Minutes, heartbeat.IntervalByAgent)
		refused = err != nil
		return ps, err
	})
	if err == nil && !refused {
		run.confirm = append(run.confirm, i18n.Text(run.lang, i18n.HeartbeatInterval, v.Minutes))
	}
	return am, err
}

// heartbeat applies a checklist decision to the project's heartbeat (the
// global one outside a project). A refused decision is recorded as the
// marker's effect.
func (h *Markers) heartbeat(ctx context.Context, run *markerRun, md domain.Metadata, decide func(*heartbeat.Heartbeat) ([]domain.Payload, error)) (markers.AppliedMarker, error) {
	scope := cmp.Or(run.project, heartbeat.GlobalHeartbeat)
	stream := heartbeat.HeartbeatStream(scope)
	var decideErr error
	am, err := onStream(ctx, h, md, stream, newHeartbeat, "checklist "+scope, func(hb *heartbeat.Heartbeat) []domain.Payload {
		ps, err := decide(hb)
		decideErr = err
		return ps
	})
	if decideErr != nil {
		return markers.AppliedMarker{Effect: "rejected: " + decideErr.Error(), Stream: stream}, err
	}
	return am, err
}
