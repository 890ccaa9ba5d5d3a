package slash

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/catalog"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/sender"
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

// dirNames lists the sub-directories of DataDir/sub.
func (c *Commands) dirNames(sub string) []string {
	entries, err := os.ReadDir(filepath.Join(c.DataDir, sub))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out
}

func (c *Commands) project(ctx context.Context, call *cmdCall, arg string) (string, error) {
	if arg == "" {
		return c.listProjects(ctx, call)
	}
	if strings.EqualFold(arg, "off") {
		if _, err := c.onSender(ctx, call, func(p sender.SenderProfile) []domain.Payload {
			if p.ActiveProject == "" {
				return nil
			}
			return []domain.Payload{sender.ProjectDeactivated{Project: p.ActiveProject}}
		}); err != nil {
			return "", err
		}
		return i18n.More(call.lang, i18n.ProjectOff), nil
	}
	names, err := c.projectNames(ctx)
	if err != nil {
		return "", err
	}
	if !slices.Contains(names, arg) {
		return i18n.More(call.lang, i18n.ProjectUnknown, arg), nil
	}
	if _, err := c.onSender(ctx, call, func(p sender.SenderProfile) []domain.Payload {
		if p.ActiveProject == arg {
			return nil
		}
		return []domain.Payload{sender.ProjectActivated{Project: arg}}
	}); err != nil {
		return "", err
	}
	return i18n.More(call.lang, i18n.ProjectOn, arg), nil
}
