package app

import (
	"path/filepath"

	"github.com/omega-gateway/omega/handlers/build"
	"github.com/omega-gateway/omega/handlers/pipeline"
)

// startBuilds prepares the build manager (not in a re-run, which must
// call no agent); it imports the topologies when it runs.
func (r *Runtime) startBuilds(replay bool, provider pipeline.Provider, workspace string) (err error) {
	if replay {
		return nil
	}
	cfg := r.Config
	r.Builds, err = build.New(build.Config{Store: r.Store, Registry: r.Registry, Provider: provider,
		Notifier: build.ChannelNotifier{Channels: r}, Workspace: workspace, Logger: r.Logger,
		TopologiesDir: filepath.Join(cfg.DataDir, "topologies"),
		Models:        build.Models(cfg.Provider.ModelFast, cfg.Provider.ModelComplex),
		NudgeFirst:    cfg.StatusFirst, NudgeEvery: cfg.StatusEvery, Node: r.node.ID})
	return err
}

// topologiesDir is where topologies are imported from; none in a re-run,
// which reads the topologies its turn's log recorded.
func topologiesDir(dataDir string, opts RuntimeOptions) string {
	if opts.Replay != nil {
		return ""
	}
	return filepath.Join(dataDir, "topologies")
}
