package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strings"
	"time"

	"github.com/omega-gateway/omega/domain"
)

// ProjectsStream holds every project definition: one stream, so that an
// import appends with the version it read and two processes importing the
// same change cannot both record it.
const ProjectsStream = "projects"

// MaxProjectRole bounds the ROLE.md text an event carries (bytes); a
// longer file is cut there.
const MaxProjectRole = 32 << 10

// Project definition events, imported from $OMEGA_DATA_DIR/projects/<name>/ROLE.md.
type (
	// ProjectDefined records a project that appeared (or came back) with
	// its ROLE.md text and that text's hash.
	ProjectDefined struct {
		Name string `json:"name"`
		Role string `json:"role"`
		Hash string `json:"hash"`
	}
	// ProjectRoleChanged records a new ROLE.md text for a defined project.
	ProjectRoleChanged struct {
		Name string `json:"name"`
		Role string `json:"role"`
		Hash string `json:"hash"`
	}
	// ProjectRemoved records that a project's folder (or its ROLE.md) is gone.
	ProjectRemoved struct {
		Name string `json:"name"`
	}
)

func (ProjectDefined) EventType() string     { return "ProjectDefined" }
func (ProjectRoleChanged) EventType() string { return "ProjectRoleChanged" }
func (ProjectRemoved) EventType() string     { return "ProjectRemoved" }

// RegisterProjectEvents adds the project definition events to a registry.
func RegisterProjectEvents(r *domain.Registry) {
	for _, p := range []domain.Payload{ProjectDefined{}, ProjectRoleChanged{}, ProjectRemoved{}} {
		r.Register(p, 1)
	}
}

// RoleHash identifies a ROLE.md text.
func RoleHash(role string) string {
	sum := sha256.Sum256([]byte(role))
	return hex.EncodeToString(sum[:])
}

// ProjectDef is one defined project.
type ProjectDef struct {
	Name, Role, Hash string
}

// Projects is the projects stream folded: the projects defined now.
type Projects struct {
	Defs map[string]ProjectDef
	// Version is the stream version folded so far.
	Version int64
}

// Apply folds one event of the projects stream.
func (p *Projects) Apply(e domain.Payload, version int64, _ time.Time) {
	if p.Defs == nil {
		p.Defs = map[string]ProjectDef{}
	}
	switch ev := e.(type) {
	case ProjectDefined:
		p.Defs[ev.Name] = ProjectDef(ev)
	case ProjectRoleChanged:
		p.Defs[ev.Name] = ProjectDef(ev)
	case ProjectRemoved:
		delete(p.Defs, ev.Name)
	}
	p.Version = version
}

// Names lists the defined projects, sorted.
func (p Projects) Names() []string {
	out := make([]string, 0, len(p.Defs))
	for name := range p.Defs {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// Role is a project's ROLE.md text ("" when it is not defined).
func (p Projects) Role(name string) string { return p.Defs[name].Role }

// Has reports whether a project is defined.
func (p Projects) Has(name string) bool {
	_, ok := p.Defs[name]
	return ok
}

// ValidProjectName reports whether a folder name can name a project: not
// hidden, no path separators, not blank.
func ValidProjectName(name string) bool {
	return strings.TrimSpace(name) == name && name != "" && !strings.HasPrefix(name, ".") &&
		!strings.ContainsAny(name, `/\`) && len(name) <= 100
}

// Reconcile decides the events that make the log say what the folder
// says: found maps each project found to its ROLE.md text. Unchanged
// projects produce nothing, so a repeated import appends nothing.
func (p Projects) Reconcile(found map[string]string) []domain.Payload {
	var out []domain.Payload
	names := make([]string, 0, len(found))
	for name := range found {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		role := cutRole(found[name])
		hash := RoleHash(role)
		old, ok := p.Defs[name]
		switch {
		case !ok:
			out = append(out, ProjectDefined{Name: name, Role: role, Hash: hash})
		case old.Hash != hash:
			out = append(out, ProjectRoleChanged{Name: name, Role: role, Hash: hash})
		}
	}
	for _, name := range p.Names() {
		if _, ok := found[name]; !ok {
			out = append(out, ProjectRemoved{Name: name})
		}
	}
	return out
}

// cutRole bounds a role text at MaxProjectRole bytes, on a rune boundary.
func cutRole(role string) string {
	if len(role) <= MaxProjectRole {
		return role
	}
	cut := MaxProjectRole
	for cut > 0 && !isRuneStart(role[cut]) {
		cut--
	}
	return role[:cut]
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
