package handlers

import (
	"context"

	"github.com/omega-gateway/omega/domain"
)

// ProjectCatalog gives the projects as the log records them, after
// importing what changed in their folder (package projects).
type ProjectCatalog interface {
	Sync(ctx context.Context) (domain.Projects, error)
}

// knownProjects are the projects a turn's context is built with: read
// from the log (imported first), never from the folder, so a re-run sees
// the roles of the turn's time. No catalog: no projects.
func (d *Driver) knownProjects(ctx context.Context) (domain.Projects, error) {
	if d.Projects == nil {
		return domain.Projects{}, nil
	}
	return d.Projects.Sync(ctx)
}

// turnPrompts are the system prompt sections for what this process can
// do at this turn, and the capabilities they were resolved for. Without
// configured capabilities the prompt is used as written (everything on).
func (d *Driver) turnPrompts(known domain.Projects) (map[string]string, []string) {
	if d.Config.Capabilities == nil {
		return d.Prompts.Sections(), nil
	}
	caps := *d.Config.Capabilities
	caps.Projects = len(known.Defs) > 0
	if d.Config.SkillsPresent != nil {
		caps.Skills = d.Config.SkillsPresent()
	}
	return d.Prompts.For(caps).Sections(), caps.Names()
}
