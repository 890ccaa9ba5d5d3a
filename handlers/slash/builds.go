package slash

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"

	builddom "github.com/omega-gateway/omega/domain/build"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/i18n/buildmsg"
	"github.com/omega-gateway/omega/handlers/build"
)

// buildNamespace derives a build's id from the turn that asked for it, so
// that a re-run of the turn names the same build.
var buildNamespace = uuid.MustParse("5b0c1d2e-9a8f-4e71-b0a3-6c2d7e8f9a10")

// build answers /build: "list" (or nothing), "cancel ID", "resume ID", or
// what to build.
func (c *Commands) build(ctx context.Context, call *cmdCall, arg string) (string, error) {
	if c.Builds == nil {
		return i18n.More(call.lang, i18n.NothingYet), nil
	}
	word, rest, _ := strings.Cut(strings.TrimSpace(arg), " ")
	rest = strings.TrimSpace(rest)
	switch strings.ToLower(word) {
	case "", "list":
		return c.listBuilds(ctx, call)
	case "cancel":
		return c.steerBuild(ctx, call, rest, c.Builds.Cancel, buildmsg.Cancelled)
	case "resume":
		return c.steerBuild(ctx, call, rest, c.Builds.Resume, -1)
	}
	m := call.turn.Received
	req, err := c.Builds.Start(ctx, build.Spec{
		ID: uuid.NewSHA1(buildNamespace, []byte(call.turn.ID)).String(), Request: arg, Origin: "slash",
		Channel: m.Channel, ChatID: m.ChatID, SenderID: m.SenderID, Language: call.lang,
	}, "")
	if err != nil {
		return err.Error(), nil //nolint:nilerr // the person reads why: a topology that does not validate says where
	}
	return buildmsg.Text(call.lang, buildmsg.Starting, req.Name, len(req.Topology.Phases), req.WorstCaseCalls), nil
}

func (c *Commands) listBuilds(ctx context.Context, call *cmdCall) (string, error) {
	states, err := c.Builds.List(ctx)
	if err != nil {
		return "", err
	}
	var lines []string
	m := call.turn.Received
	for _, st := range states {
		if st.Req.Channel != m.Channel || st.Req.ChatID != m.ChatID {
			continue
		}
		lines = append(lines, fmt.Sprintf("%s %s %s (%d/%d)", st.Req.ID[:8], st.Req.Name, st.Status, st.Calls, st.Req.WorstCaseCalls))
	}
	if len(lines) == 0 {
		return i18n.More(call.lang, i18n.NothingYet), nil
	}
	return strings.Join(lines, "\n"), nil
}

func (c *Commands) steerBuild(ctx context.Context, call *cmdCall, prefix string, do func(context.Context, string, string) (string, error), done buildmsg.Key) (string, error) {
	id, err := do(ctx, prefix, call.sender)
	if err != nil {
		return err.Error(), nil //nolint:nilerr // the person reads why: no such build, or not in a state for it
	}
	if done < 0 {
		return "▶️ " + id[:8], nil
	}
	return buildmsg.Text(call.lang, done, id[:8]), nil
}

// Builds starts and steers builds from chat.
type Builds interface {
	Start(ctx context.Context, spec build.Spec, topology string) (builddom.BuildRequested, error)
	List(ctx context.Context) ([]builddom.State, error)
	Cancel(ctx context.Context, prefix, by string) (string, error)
	Resume(ctx context.Context, prefix, by string) (string, error)
}
