package slash

import (
	"context"

	"github.com/google/uuid"

	"github.com/omega-gateway/omega/domain"
	builddom "github.com/omega-gateway/omega/domain/build"
	"github.com/omega-gateway/omega/domain/i18n/buildmsg"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/handlers/build"
)

// AnswersChat reports whether a plain message is about a build: a yes or
// no to a pending proposal (or the turn that gave it), or a message that
// names a build, which is offered for confirmation without a model call.
func (c *Commands) AnswersChat(ctx context.Context, tn *turn.Turn) bool {
	if c.Builds == nil || tn.Received == nil {
		return false
	}
	if _, ok := builddom.Answer(tn.Received.Text); ok {
		p, err := c.proposal(ctx, tn)
		return err == nil && p.Awaits(tn.ID)
	}
	return builddom.HasKeyword(tn.Received.Text)
}

func (c *Commands) proposal(ctx context.Context, tn *turn.Turn) (builddom.Proposal, error) {
	var p builddom.Proposal
	_, err := eventstore.Fold(ctx, c.Store(), c.Registry(), c.proposalStream(tn), &p)
	return p, err
}

func (c *Commands) proposalStream(tn *turn.Turn) string {
	return builddom.ProposalStream(sender.SenderKey(tn.Received.Channel, tn.Received.SenderID))
}

// buildChat answers a plain message AnswersChat took: the answer to the
// proposal, or the question that proposes a build.
func (c *Commands) buildChat(ctx context.Context, call *cmdCall) (string, error) {
	tn := call.turn
	stream := c.proposalStream(tn)
	fresh := func() eventstore.Aggregate { return &builddom.Proposal{} }
	p, err := c.proposal(ctx, tn)
	if err != nil {
		return "", err
	}
	yes, isAnswer := builddom.Answer(tn.Received.Text)
	if !isAnswer || !p.Awaits(tn.ID) {
		_, err := c.Once(ctx, stream, call.md, fresh, func() ([]domain.Payload, error) {
			return []domain.Payload{builddom.BuildProposed{Request: tn.Received.Text, Turn: tn.ID, Origin: "keywords"}}, nil
		})
		return buildmsg.Text(call.lang, buildmsg.Confirm, tn.Received.Text), err
	}
	if p.Answered != nil { // this turn answered already; a resumed turn says it again
		return c.answered(ctx, call, *p.Answered)
	}
	ans := builddom.ProposalAnswered{Turn: tn.ID, Yes: yes, Request: p.Pending.Request, Origin: p.Pending.Origin}
	if yes {
		ans.BuildID = uuid.NewSHA1(buildNamespace, []byte(tn.ID)).String()
	}
	if _, err := c.Once(ctx, stream, call.md, fresh, func() ([]domain.Payload, error) { return []domain.Payload{ans}, nil }); err != nil {
		return "", err
	}
	return c.answered(ctx, call, ans)
}

// answered starts the build a yes asked for (once: its id is the turn's)
// and says so, or declines.
func (c *Commands) answered(ctx context.Context, call *cmdCall, ans builddom.ProposalAnswered) (string, error) {
	if !ans.Yes {
		return buildmsg.Text(call.lang, buildmsg.Declined), nil
	}
	m := call.turn.Received
	spec := build.Spec{ID: ans.BuildID, Request: ans.Request, Origin: ans.Origin, Channel: m.Channel, ChatID: m.ChatID, SenderID: m.SenderID, Language: call.lang}
	req, err := c.Builds.Start(ctx, spec, "")
	if err != nil {
		return err.Error(), nil //nolint:nilerr // the person reads why: a topology that does not validate says where
	}
	return buildmsg.Text(call.lang, buildmsg.Starting, req.Name, len(req.Topology.Phases), req.WorstCaseCalls), nil
}
