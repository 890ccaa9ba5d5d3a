package app

import (
	"context"

	"github.com/omega-gateway/omega/handlers/claudemd"
	"github.com/omega-gateway/omega/prompts"
	"golang.org/x/sync/errgroup"
)

// runClaudeMD keeps the workspace's CLAUDE.md in g until ctx ends
// (OMEGA_CLAUDE_MD).
func (r *Runtime) runClaudeMD(ctx context.Context, g *errgroup.Group) {
	if !r.Config.ClaudeMD {
		return
	}
	m, err := claudemd.New(claudemd.Maintainer{Store: r.Store, Registry: r.Registry, Dir: r.Config.WorkspaceDir(),
		Template: prompts.WorkspaceClaude(), Head: r.Engine.Head, Logger: r.Logger})
	if err != nil {
		r.Logger.Error("workspace CLAUDE.md not kept", "err", err)
		return
	}
	g.Go(func() error { return ignoreStop(ctx, m.Run(ctx)) })
}
