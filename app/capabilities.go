package app

import (
	"context"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/prompts"
	"github.com/omega-gateway/omega/providers"
)

// capabilities is what this process can do, as the system prompt tells
// the model: the heartbeat when it runs, images when a running channel
// delivers them and the provider can open them, WhatsApp pairing when
// WhatsApp is enabled, tools and the sandbox mode as the provider has
// them, the channels that run. Skills and projects are looked at per
// turn by the driver.
func (r *Runtime) capabilities(opts RuntimeOptions, sandbox string) prompts.Capabilities {
	if opts.Capabilities != nil {
		return *opts.Capabilities
	}
	// A provider given in code (tests, benchmarks) stands for Claude Code.
	tools := opts.Provider != nil || providers.HasTools(r.Config.Provider.Provider)
	return prompts.Capabilities{
		Heartbeat: r.Config.HeartbeatEnabled,
		// The due-work clock fires reminders and actions in every runtime.
		Scheduler:       true,
		Images:          tools && receivesImages(opts.Channels),
		Sandbox:         sandbox,
		WhatsAppPairing: opts.Pairing != nil,
		NoTools:         !tools,
		Channels:        channelNames(opts.Channels),
	}
}

// channelNames are the names of the channels.
func channelNames(chs []channels.Channel) []string {
	out := make([]string, 0, len(chs))
	for _, ch := range chs {
		out = append(out, ch.Name())
	}
	return out
}

// receivesImages reports whether any of the channels delivers images.
func receivesImages(chs []channels.Channel) bool {
	for _, ch := range chs {
		if ir, ok := ch.(channels.ImageReceiver); ok && ir.ReceivesImages() {
			return true
		}
	}
	return false
}

// skillsPresent reports whether the log holds any skill. A re-run's given
// capabilities decide instead.
func (r *Runtime) skillsPresent(ctx context.Context, given *prompts.Capabilities) bool {
	if given != nil {
		return given.Skills
	}
	if r.Skills == nil {
		return false
	}
	all, err := r.Skills.Skills(ctx)
	return err == nil && len(all) > 0
}
