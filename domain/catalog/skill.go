package catalog

import (
	"slices"
	"strings"
	"time"

	"github.com/omega-gateway/omega/domain"
)

// SkillsStream is the catalogue of skill definitions imported from the
// skill folders; each skill's lessons live in its own SkillStream.
const SkillsStream = "skills"

// SkillKey is the name a skill is known by: trimmed and lower case, so
// that "Git" in a marker and "git" in a SKILL.md are the same skill.
func SkillKey(name string) string { return strings.ToLower(strings.TrimSpace(name)) }

// MCPServerDef is an MCP server a skill brings. Env holds only the names
// of its environment variables: their values may be secrets and stay in
// the SKILL.md file, never in the log.
type MCPServerDef struct {
	Name    string   `json:"name"`
	Command string   `json:"command"`
	Args    []string `json:"args,omitempty"`
	Env     []string `json:"env,omitempty"`
}

// Skill catalogue events.
type (
	// SkillDefined records a skill as its SKILL.md defined it; a changed
	// file is a new SkillDefined with a new hash.
	SkillDefined struct {
		Name        string         `json:"name"`
		Description string         `json:"description,omitempty"`
		Triggers    []string       `json:"triggers,omitempty"`
		MCPServers  []MCPServerDef `json:"mcp_servers,omitempty"`
		Body        string         `json:"body"`
		Hash        string         `json:"hash"`
		File        string         `json:"file,omitempty"`
	}
	// SkillRemoved records that a skill's folder is gone.
	SkillRemoved struct {
		Name string `json:"name"`
	}
)

func (SkillDefined) EventType() string { return "SkillDefined" }
func (SkillRemoved) EventType() string { return "SkillRemoved" }

// RegisterSkillEvents adds the skill catalogue events to a registry.
func RegisterSkillEvents(r *domain.Registry) {
	r.Register(SkillDefined{}, 1)
	r.Register(SkillRemoved{}, 1)
	r.Register(SkillLessonRecorded{}, 1)
}

// SkillCatalog is the skills stream folded: the current definition of
// each skill, by key.
type SkillCatalog struct {
	Version int64
	Skills  map[string]SkillDefined
}

func (c *SkillCatalog) Apply(p domain.Payload, version int64, _ time.Time) {
	c.Version = version
	if c.Skills == nil {
		c.Skills = map[string]SkillDefined{}
	}
	switch e := p.(type) {
	case SkillDefined:
		c.Skills[SkillKey(e.Name)] = e
	case SkillRemoved:
		delete(c.Skills, SkillKey(e.Name))
	}
}

// Names lists the defined skills' keys in order.
func (c SkillCatalog) Names() []string {
	out := make([]string, 0, len(c.Skills))
	for k := range c.Skills {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Import decides what the skill files found now change in the catalogue:
// a new or changed skill (by hash) is defined again; a skill whose file
// is gone is removed. Unchanged skills record nothing, so importing the
// same files twice is a no-op.
//
// keep names skills whose file is there but broken: their last good
// definition stays.
func (c SkillCatalog) Import(found []SkillDefined, keep []string) []domain.Payload {
	var out []domain.Payload
	seen := map[string]bool{}
	for _, f := range found {
		k := SkillKey(f.Name)
		if k == "" || seen[k] {
			continue
		}
		seen[k] = true
		if cur, ok := c.Skills[k]; !ok || cur.Hash != f.Hash {
			out = append(out, f)
		}
	}
	for _, k := range c.Names() {
		if !seen[k] && !slices.Contains(keep, k) {
			out = append(out, SkillRemoved{Name: c.Skills[k].Name})
		}
	}
	return out
}
