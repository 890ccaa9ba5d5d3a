// Package claudemd keeps the workspace's CLAUDE.md: deployed at start
// from an embedded template, with a generated section listing the
// projects and skills the log defines, rewritten whenever they change.
// Only the part between its markers is omega's: whatever the person
// writes around it stays, and the file is replaced atomically (a temporary
// file renamed over it), so a reader never sees half of it. No model is
// asked for the lists: they are the log's, exactly.
package claudemd

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/omega-gateway/omega/domain/catalog"
)

// The markers around the generated section.
const (
	Begin = "<!-- omega:generated:begin (omega rewrites this part when projects or skills change; edit outside it) -->"
	End   = "<!-- omega:generated:end -->"
)

// beginPrefix finds a begin marker whatever its explanation says.
const beginPrefix = "<!-- omega:generated:begin"

// ErrMarkers: the file's markers are not one begin followed by one end,
// so which part is omega's cannot be told; the file is left alone.
var ErrMarkers = errors.New("CLAUDE.md's generated-section markers are broken (want one begin marker, then one end marker); leaving the file alone")

// Section renders the generated section's body: the projects and skills
// of the log, sorted, each with the first line of its role or its
// description.
func Section(projects catalog.Projects, skills catalog.SkillCatalog) string {
	var b strings.Builder
	b.WriteString("## Projects\n\n")
	if len(projects.Defs) == 0 {
		b.WriteString("None yet.\n")
	} else {
		b.WriteString("| Project | Role |\n|---|---|\n")
		for _, name := range projects.Names() {
			fmt.Fprintf(&b, "| %s | %s |\n", cell(name), cell(firstLine(projects.Role(name))))
		}
	}
	b.WriteString("\n## Skills\n\n")
	if len(skills.Skills) == 0 {
		b.WriteString("None yet.\n")
		return b.String()
	}
	b.WriteString("| Skill | Description | Triggers |\n|---|---|---|\n")
	for _, k := range skills.Names() {
		s := skills.Skills[k]
		fmt.Fprintf(&b, "| %s | %s | %s |\n", cell(s.Name), cell(firstLine(s.Description)), cell(strings.Join(s.Triggers, ", ")))
	}
	return b.String()
}

// firstLine is a text's first non-blank line, without Markdown heading
// marks.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "#")); l != "" {
			return l
		}
	}
	return ""
}

// cell makes text safe inside a table cell: one line, no column breaks,
// and no marker of ours.
func cell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "<!--", "&lt;!--")
	if r := []rune(s); len(r) > 160 {
		s = string(r[:159]) + "…"
	}
	return s
}

// Merge returns the file's new content: the template with the section
// where none existed (current is nil), the current text with only the
// part between the markers replaced, or the current text with the
// section appended when the person's file has no markers.
func Merge(current []byte, template, section string) ([]byte, error) {
	block := Begin + "\n" + section + End + "\n"
	if current == nil {
		return []byte(strings.TrimRight(template, "\n") + "\n\n" + block), nil
	}
	begins := bytes.Count(current, []byte(beginPrefix))
	ends := bytes.Count(current, []byte(End))
	switch {
	case begins == 0 && ends == 0:
		return append(append(bytes.Clone(current), separator(current)...), block...), nil
	case begins != 1 || ends != 1:
		return nil, ErrMarkers
	}
	start := bytes.Index(current, []byte(beginPrefix))
	end := bytes.Index(current, []byte(End))
	if end < start {
		return nil, ErrMarkers
	}
	stop := end + len(End)
	if stop < len(current) && current[stop] == '\n' {
		stop++
	}
	out := append(bytes.Clone(current[:start]), block...)
	return append(out, current[stop:]...), nil
}

// separator puts a blank line between the person's text and the section.
func separator(current []byte) string {
	switch {
	case len(current) == 0:
		return ""
	case bytes.HasSuffix(current, []byte("\n\n")):
		return ""
	case bytes.HasSuffix(current, []byte("\n")):
		return "\n"
	}
	return "\n\n"
}
