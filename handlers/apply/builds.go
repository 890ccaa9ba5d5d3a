package apply

import (
	"context"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/build"
	"github.com/omega-gateway/omega/domain/i18n/buildmsg"
	"github.com/omega-gateway/omega/domain/markers"
)

// applyBuildProposal records the build the model proposes and asks the
// person to confirm it: nothing is built before their yes.
func applyBuildProposal(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, v markers.BuildProposal) (markers.AppliedMarker, error) {
	am, err := onStream(ctx, h, md, build.ProposalStream(run.sender), func() *build.Proposal { return &build.Proposal{} }, "build proposed",
		func(*build.Proposal) []domain.Payload {
			return []domain.Payload{build.BuildProposed{Request: v.Request, Turn: run.turn.ID, Origin: "marker"}}
		})
	if err == nil {
		run.confirm = append(run.confirm, buildmsg.Text(run.lang, buildmsg.Confirm, v.Request))
	}
	return am, err
}
