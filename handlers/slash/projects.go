package slash

import (
	"context"
	"strings"

	"github.com/omega-gateway/omega/domain/catalog"
	"github.com/omega-gateway/omega/domain/i18n"
)

// ProjectCatalog gives the projects as the log records them, after
// importing what changed in their folder (package projects).
type ProjectCatalog interface {
	Sync(ctx context.Context) (catalog.Projects, error)
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
