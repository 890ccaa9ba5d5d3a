package apply

import (
	"context"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/markers"
)

// apply records one marker and describes its effect.
func (h *Markers) apply(ctx context.Context, run *markerRun, md domain.Metadata, mk markers.Marker) (markers.AppliedMarker, error) {
	if f, ok := appliers[mk.Name()]; ok {
		return f(ctx, h, run, md, mk)
	}
	return markers.AppliedMarker{Effect: "ignored"}, nil // unreachable: a test checks every spec has an applier
}

// applyFunc applies one parsed marker.
type applyFunc func(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, mk markers.Marker) (markers.AppliedMarker, error)

// typed adapts an apply function of one marker type.
func typed[M markers.Marker](f func(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, m M) (markers.AppliedMarker, error)) applyFunc {
	return func(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, mk markers.Marker) (markers.AppliedMarker, error) {
		return f(ctx, h, run, md, mk.(M))
	}
}

// appliers holds one function per marker spec (markers.Specs), keyed by
// protocol name; TestEveryMarkerSpecHasAnApplier keeps them in step.
var appliers = map[string]applyFunc{
	markers.NameSchedule:                   typed(applySchedule),
	markers.NameScheduleAction:             typed(applySchedule),
	markers.NameCancelTask:                 typed(applyCancel),
	markers.NameUpdateTask:                 typed(applyUpdate),
	markers.NameProjectActivate:            typed(applyProjectActivate),
	markers.NameProjectDeactivate:          typed(applyProjectDeactivate),
	markers.NameWhatsAppQR:                 typed(applyWhatsAppQR),
	markers.NameLangSwitch:                 typed(applyLangSwitch),
	markers.NamePersonality:                typed(applyPersonality),
	markers.NamePurgeFacts:                 typed(applyPurgeFacts),
	markers.NameForgetConversation:         typed(applyForget),
	markers.NameHeartbeatAdd:               typed(applyHeartbeatAdd),
	markers.NameHeartbeatRemove:            typed(applyHeartbeatRemove),
	markers.NameHeartbeatInterval:          typed(applyHeartbeatInterval),
	markers.NameHeartbeatSuppressSection:   typed(applyHeartbeatSuppress),
	markers.NameHeartbeatUnsuppressSection: typed(applyHeartbeatUnsuppress),
	markers.NameHeartbeatOK:                typed(effectOnly[markers.HeartbeatOK]("nothing to report")),
	markers.NameLimitation:                 typed(applyLimitation),
	markers.NameSelfHeal:                   typed(applySelfHeal),
	markers.NameSelfHealResolved:           typed(applySelfHealResolved),
	markers.NameBugReport:                  typed(applyBugReport),
	markers.NameSkillImprove:               typed(applySkillImprove),
	markers.NameActionOutcome:              typed(applyActionOutcome),
	markers.NameReward:                     typed(applyReward),
	markers.NameLesson:                     typed(applyLesson),
	markers.NameSilent:                     typed(effectOnly[markers.Silent]("silent")),
	markers.NameBuildProposal:              typed(applyBuildProposal),
}

// effectOnly is the applier of a marker that records nothing but itself.
func effectOnly[M markers.Marker](effect string) func(context.Context, *Markers, *markerRun, domain.Metadata, M) (markers.AppliedMarker, error) {
	return func(context.Context, *Markers, *markerRun, domain.Metadata, M) (markers.AppliedMarker, error) {
		return markers.AppliedMarker{Effect: effect}, nil
	}
}
