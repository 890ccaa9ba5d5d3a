package gather

import (
	"context"

	"github.com/omega-gateway/omega/domain/catalog"
	"github.com/omega-gateway/omega/domain/promptctx"
	"github.com/omega-gateway/omega/handlers/skills"
	"github.com/omega-gateway/omega/prompts"
)

// turnSkills are the skills a turn's context names and the ones its
// message triggered.
type turnSkills struct {
	lines   []string // "name: description" of every skill
	matched []skills.Skill
}

// skillsFor imports changed skill files, then reads the skills from the
// log and matches the message against their triggers. No library: none.
func (g *Gatherer) skillsFor(ctx context.Context, message string) (turnSkills, error) {
	if g.Skills == nil {
		return turnSkills{}, nil
	}
	if err := g.Skills.Sync(ctx); err != nil {
		g.Logger.Warn("skills not imported", "err", err)
	}
	all, err := g.Skills.Skills(ctx)
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

// SkillNames lists the skills with their descriptions, for the
// classifier; a library that cannot be read lists none.
func (g *Gatherer) SkillNames(ctx context.Context) []string {
	if g.Skills == nil {
		return nil
	}
	all, err := g.Skills.Skills(ctx)
	if err != nil {
		g.Logger.Warn("skills not read for the classifier", "err", err)
		return nil
	}
	return skillLines(all)
}

// knownProjects are the projects a turn's context is built with: read
// from the log (imported first), never from the folder, so a re-run sees
// the roles of the turn's time. No catalog: no projects.
func (g *Gatherer) knownProjects(ctx context.Context) (catalog.Projects, error) {
	if g.Projects == nil {
		return catalog.Projects{}, nil
	}
	return g.Projects.Sync(ctx)
}

// turnPrompts are the system prompt sections (and sandbox text) for what
// this process can do at this turn, and the capabilities they were
// resolved for. Without configured capabilities the prompt is used as
// written (everything on).
func (g *Gatherer) turnPrompts(known catalog.Projects, hasSkills bool) (*prompts.Set, []string) {
	if g.Capabilities == nil {
		return g.Prompts, nil
	}
	caps := *g.Capabilities
	caps.Projects = len(known.Defs) > 0
	caps.Skills = hasSkills
	return g.Prompts.For(caps), caps.Names()
}
