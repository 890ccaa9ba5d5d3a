package handlers

import (
	"context"
	"strings"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/i18n"
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

// projectNames are the projects /projects lists and /project accepts: as
// the log records them (imported first), or the folders without a catalog.
func (c *Commands) projectNames(ctx context.Context) ([]string, error) {
	if c.Projects == nil {
		return c.dirNames("projects"), nil
	}
	known, err := c.Projects.Sync(ctx)
	if err != nil {
		return nil, err
	}
	return known.Names(), nil
}

// listProjects answers /projects: each project, the active one starred.
func (c *Commands) listProjects(ctx context.Context, call *cmdCall) (string, error) {
	names, err := c.projectNames(ctx)
	if err != nil {
		return "", err
	}
	if len(names) == 0 {
		return i18n.More(call.lang, i18n.NothingYet), nil
	}
	lines := make([]string, len(names))
	for i, n := range names {
		mark := "- "
		if n == call.profile.ActiveProject {
			mark = "* "
		}
		lines[i] = mark + n
	}
	return i18n.More(call.lang, i18n.ProjectsList, strings.Join(lines, "\n")), nil
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
