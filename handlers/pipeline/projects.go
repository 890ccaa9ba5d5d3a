package pipeline

import (
	"context"

	"github.com/omega-gateway/omega/domain/catalog"
	"github.com/omega-gateway/omega/prompts"
)

// ProjectCatalog gives the projects as the log records them, after
// importing what changed in their folder (package projects).
type ProjectCatalog interface {
	Sync(ctx context.Context) (catalog.Projects, error)
}

// knownProjects are the projects a turn's context is built with: read
// from the log (imported first), never from the folder, so a re-run sees
// the roles of the turn's time. No catalog: no projects.
func (d *Driver) knownProjects(ctx context.Context) (catalog.Projects, error) {
	if d.Projects == nil {
		return catalog.Projects{}, nil
	}
	return d.Projects.Sync(ctx)
}

// turnPrompts are the system prompt sections (and sandbox text) for what
// this process can do at this turn, and the capabilities they were
// resolved for. Without
// configured capabilities the prompt is used as written (everything on).
func (d *Driver) turnPrompts(known catalog.Projects, skills bool) (*prompts.Set, []string) {
	if d.Config.Capabilities == nil {
		return d.Prompts, nil
	}
	caps := *d.Config.Capabilities
	caps.Projects = len(known.Defs) > 0
	caps.Skills = skills
	return d.Prompts.For(caps), caps.Names()
}

// scoped files one learned item of project of under the active project's
// own items (labelled with the project) or the general ones; another
// project's item goes nowhere.
func scoped(own, general []string, of, active, text string) ([]string, []string) {
	switch of {
	case "":
		return own, append(general, text)
	case active:
		return append(own, "["+active+"] "+text), general
	}
	return own, general
}

// projectFirst is the project's latest items, then the latest general ones
// in the room left under maxLearning.
func projectFirst(own, general []string) []string {
	own = lastN(own, maxLearning)
	return append(own, lastN(general, maxLearning-len(own))...)
}
