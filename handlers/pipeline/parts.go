package pipeline

import (
	"github.com/omega-gateway/omega/handlers/pipeline/coalesce"
	"github.com/omega-gateway/omega/handlers/pipeline/gather"
	"github.com/omega-gateway/omega/handlers/pipeline/images"
	"github.com/omega-gateway/omega/handlers/workspace"
)

// buildParts builds the driver's parts from its collaborators, once:
// the context's reads, the coalescer and the image sender.
func (d *Driver) buildParts() error {
	g := gather.Gatherer{
		Store: d.Store, Registry: d.Registry, Read: d.Read, Prompts: d.Prompts, Logger: d.Logger,
		Projects: d.Projects, Recall: d.Recall, Capabilities: d.Config.Capabilities, Sandbox: d.Config.Sandbox,
		HistoryLimit: d.Config.HistoryLimit, ConversationIdle: d.Config.ConversationIdle,
	}
	if d.Skills != nil {
		// A nil library stays a nil port: no skills.
		g.Skills = d.Skills
	}
	var err error
	if d.gatherer, err = gather.New(g); err != nil {
		return err
	}
	var isCommand func(string) bool
	if d.Commands != nil {
		isCommand = d.Commands.IsCommand
	}
	if d.coalescer, err = coalesce.New(d.Store, d.Registry, isCommand, d.Logger); err != nil {
		return err
	}
	files := d.Images
	if files == nil {
		files = workspace.Images{}
	}
	d.photos, err = images.New(files, d.Config.Redactor.Error)
	return err
}
