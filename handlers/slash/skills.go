package slash

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/omega-gateway/omega/domain/i18n"
)

// skillsAnswer imports the skill folders and lists the skills of the log with their triggers, MCP
// servers and lessons.
func (c *Commands) skillsAnswer(ctx context.Context, call *cmdCall) (string, error) {
	if c.Skills == nil {
		return i18n.More(call.lang, i18n.NothingYet), nil
	}
	// Import first, as a turn does: a skill added a moment ago is listed
	// now, not after the next ordinary message.
	if err := c.Skills.Sync(ctx); err != nil {
		return "", fmt.Errorf("import skills: %w", err)
	}
	all, err := c.Skills.Skills(ctx)
	if err != nil {
		return "", err
	}
	if len(all) == 0 {
		return i18n.Skill(call.lang, i18n.SkillsNone, filepath.Join(c.DataDir, "skills")), nil
	}
	var b strings.Builder
	for i, s := range all {
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("- " + s.Name)
		if s.Description != "" {
			b.WriteString(": " + s.Description)
		}
		if len(s.Triggers) > 0 {
			b.WriteString("\n  " + i18n.Skill(call.lang, i18n.SkillTriggers, strings.Join(s.Triggers, ", ")))
		}
		if len(s.MCPServers) > 0 {
			names := make([]string, len(s.MCPServers))
			for j, m := range s.MCPServers {
				names[j] = m.Name
			}
			b.WriteString("\n  " + i18n.Skill(call.lang, i18n.SkillMCP, strings.Join(names, ", ")))
		}
		if len(s.Lessons) > 0 {
			b.WriteString("\n  " + i18n.Skill(call.lang, i18n.SkillLessons, "  · "+strings.Join(s.Lessons, "\n  · ")))
		}
	}
	return i18n.More(call.lang, i18n.SkillsList, b.String()), nil
}
