package app

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/omega-gateway/omega/handlers/build"
	"github.com/omega-gateway/omega/handlers/pipeline"
)

// startBuilds imports the topologies and prepares the build manager (not
// in a re-run, which must call no agent). A topology that does not
// validate is logged, not fatal: the others still build.
func (r *Runtime) startBuilds(ctx context.Context, opts RuntimeOptions, provider pipeline.Provider, workspace string) error {
	if opts.Replay != nil {
		return nil
	}
	_, problems, err := build.Import(ctx, r.Store, r.Registry, filepath.Join(r.Config.DataDir, "topologies"), r.Logger)
	if err = errors.Join(append(problems, err)...); err != nil {
		r.Logger.Warn("topologies not all imported", "err", err)
	}
	cfg := r.Config
	r.Builds, err = build.New(build.Config{Store: r.Store, Registry: r.Registry, Provider: provider,
		Notifier: build.ChannelNotifier{Channels: r}, Workspace: workspace, Logger: r.Logger,
		Models:     build.Models(cfg.Provider.ModelFast, cfg.Provider.ModelComplex),
		NudgeFirst: cfg.StatusFirst, NudgeEvery: cfg.StatusEvery})
	return err
}
