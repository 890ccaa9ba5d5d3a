package pipeline

import (
	"context"

	"github.com/omega-gateway/omega/domain/promptctx"
	"github.com/omega-gateway/omega/handlers/skills"
	"github.com/omega-gateway/omega/providers"
)

// turnSkills are the skills a turn's context names and the ones its
// message triggered.
type turnSkills struct {
	lines   []string // "name: description" of every skill
	matched []skills.Skill
}

// skillsFor imports changed skill files, then reads the skills from the
// log and matches the message against their triggers. No library: none.
func (d *Driver) skillsFor(ctx context.Context, message string) (turnSkills, error) {
	if d.Skills == nil {
		return turnSkills{}, nil
	}
	if err := d.Skills.Sync(ctx); err != nil {
		d.Logger.Warn("skills not imported", "err", err)
	}
	all, err := d.Skills.Skills(ctx)
	if err != nil {
		return turnSkills{}, err
	}
	return turnSkills{lines: skillLines(all), matched: skills.Matching(all, message)}, nil
}

func skillLines(all []skills.Skill) []string {
	out := make([]string, len(all))
	for i, s := range all {
		out[i] = s.Name
		if s.Description != "" {
			out[i] += ": " + s.Description
		}
	}
	return out
}

func (t turnSkills) texts() []promptctx.SkillText {
	out := make([]promptctx.SkillText, len(t.matched))
	for i, s := range t.matched {
		out[i] = promptctx.SkillText{Name: s.Name, Instructions: s.Instructions()}
	}
	return out
}

// mcpServers are the MCP servers of the skills the turn's message
// triggered, for its provider call only.
func (d *Driver) mcpServers(ctx context.Context, names []string) ([]providers.MCPServer, error) {
	if d.Skills == nil || len(names) == 0 {
		return nil, nil
	}
	return d.Skills.MCPServers(ctx, names)
}

// skillNames lists the skills with their descriptions, for the classifier.
func (d *Driver) skillNames(ctx context.Context) []string {
	if d.Skills == nil {
		return nil
	}
	all, err := d.Skills.Skills(ctx)
	if err != nil {
		d.Logger.Warn("skills not read for the classifier", "err", err)
		return nil
	}
	return skillLines(all)
}
