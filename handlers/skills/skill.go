// Package skills loads the skills of $OMEGA_DATA_DIR/skills: one folder
// per skill with a SKILL.md whose front matter names it, describes it,
// lists its trigger keywords and the MCP servers it brings, and whose
// body is its instructions. Skills are imported into the event log (the
// skills stream), so a turn's prompt depends on the log, not on the
// files of the day; lessons recorded by SKILL_IMPROVE join a skill's
// instructions from the next matching turn on.
package skills

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/omega-gateway/omega/domain/catalog"
)

// FileName is the skill file inside each skill folder.
const FileName = "SKILL.md"

// File is a parsed SKILL.md: its definition as the log records it, and
// the MCP servers' environment values, which never leave the process.
type File struct {
	Def catalog.SkillDefined
	// Env holds each MCP server's environment, by server name.
	Env map[string]map[string]string
}

// Parse parses a SKILL.md. folder names the skill when the front matter
// has no name; path is used in errors.
func Parse(path, folder string, content []byte) (File, error) {
	text := strings.ReplaceAll(string(content), "\r\n", "\n")
	fm, body, first, err := split(text)
	if err != nil {
		return File{}, withFile(err, path)
	}
	root, err := parseFrontMatter(fm, first)
	if err != nil {
		return File{}, withFile(err, path)
	}
	f, err := fromNode(root, folder)
	if err != nil {
		return File{}, withFile(err, path)
	}
	f.Def.Body = strings.TrimSpace(body)
	if f.Def.Body == "" {
		return File{}, &ParseError{File: path, Line: strings.Count(text, "\n") + 1, Msg: "the skill has no instructions after its front matter"}
	}
	sum := sha256.Sum256(content)
	f.Def.Hash = hex.EncodeToString(sum[:])
	return f, nil
}

func withFile(err error, path string) error {
	if pe := (*ParseError)(nil); errors.As(err, &pe) {
		pe.File = path
		return pe
	}
	return fmt.Errorf("%s: %w", path, err)
}

// split separates the front matter (between "---" lines at the top) from
// the body; first is the line number of the front matter's first line.
func split(text string) (fm, body string, first int, err error) {
	lines := strings.Split(text, "\n")
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != "---" {
		return "", "", 0, &ParseError{Line: 1, Msg: "SKILL.md must start with a front matter block opened by ---"}
	}
	for i := 1; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == "---" {
			return strings.Join(lines[1:i], "\n"), strings.Join(lines[i+1:], "\n"), 2, nil
		}
	}
	return "", "", 0, &ParseError{Line: 1, Msg: "the front matter opened by --- is never closed"}
}

// fromNode reads the known keys; unknown keys are ignored.
func fromNode(root node, folder string) (File, error) {
	f := File{Env: map[string]map[string]string{}}
	d := &f.Def
	var err error
	if d.Name, err = str(root, "name", folder); err != nil {
		return File{}, err
	}
	if d.Description, err = str(root, "description", ""); err != nil {
		return File{}, err
	}
	if strings.TrimSpace(d.Name) == "" {
		return File{}, &ParseError{Line: root.line, Msg: "the skill has no name"}
	}
	if strings.ContainsAny(d.Name, "/\\") {
		return File{}, &ParseError{Line: root.vals["name"].line, Msg: "a skill name cannot contain / or \\"}
	}
	for _, k := range []string{"triggers", "trigger", "keywords"} {
		if v, ok := root.vals[k]; ok {
			if d.Triggers, err = strList(v, k, true); err != nil {
				return File{}, err
			}
			break
		}
	}
	for _, k := range []string{"mcp_servers", "mcpServers", "mcp"} {
		if v, ok := root.vals[k]; ok {
			if err := mcpServers(&f, v); err != nil {
				return File{}, err
			}
			break
		}
	}
	return f, nil
}

func str(m node, key, def string) (string, error) {
	v, ok := m.vals[key]
	if !ok {
		return def, nil
	}
	if v.kind != 's' {
		return "", &ParseError{Line: v.line, Msg: key + " must be a single value"}
	}
	return strings.TrimSpace(v.str), nil
}

// strList reads a list of strings; a plain string is split at commas when
// commas is set ("triggers: git, github").
func strList(v node, key string, commas bool) ([]string, error) {
	var out []string
	switch v.kind {
	case 's':
		if v.str == "" {
			return nil, nil
		}
		if !commas {
			return nil, &ParseError{Line: v.line, Msg: key + " must be a list"}
		}
		for _, s := range strings.Split(v.str, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	case 'l':
		for _, it := range v.list {
			if it.kind != 's' {
				return nil, &ParseError{Line: it.line, Msg: key + " items must be single values"}
			}
			if s := strings.TrimSpace(it.str); s != "" {
				out = append(out, s)
			}
		}
	default:
		return nil, &ParseError{Line: v.line, Msg: key + " must be a list"}
	}
	return out, nil
}

// mcpServers reads the MCP servers: a list of maps with name, command,
// args and env, or a map from server name to such a map (the layout of
// Claude Code's own mcpServers).
func mcpServers(f *File, v node) error {
	var servers []node
	switch v.kind {
	case 'l':
		servers = v.list
	case 'm':
		for _, k := range v.keys {
			s := v.vals[k]
			if s.kind != 'm' {
				return &ParseError{Line: s.line, Msg: "MCP server " + k + " must be a map with a command"}
			}
			if _, ok := s.vals["name"]; !ok {
				s.keys = append(s.keys, "name")
				s.vals["name"] = node{kind: 's', str: k, line: s.line}
			}
			servers = append(servers, s)
		}
	case 's':
		if v.str == "" {
			return nil
		}
		return &ParseError{Line: v.line, Msg: "mcp_servers must be a list of servers"}
	}
	for _, s := range servers {
		if err := mcpServer(f, s); err != nil {
			return err
		}
	}
	return nil
}

func mcpServer(f *File, s node) error {
	if s.kind != 'm' {
		return &ParseError{Line: s.line, Msg: "an MCP server must be a map with name and command"}
	}
	var (
		def catalog.MCPServerDef
		err error
	)
	if def.Name, err = str(s, "name", ""); err != nil {
		return err
	}
	if def.Command, err = str(s, "command", ""); err != nil {
		return err
	}
	if def.Name == "" || def.Command == "" {
		return &ParseError{Line: s.line, Msg: "an MCP server needs a name and a command"}
	}
	if slices.ContainsFunc(f.Def.MCPServers, func(x catalog.MCPServerDef) bool { return x.Name == def.Name }) {
		return &ParseError{Line: s.line, Msg: "duplicate MCP server " + def.Name}
	}
	if a, ok := s.vals["args"]; ok {
		if def.Args, err = strList(a, "args", false); err != nil {
			return err
		}
	}
	env := map[string]string{}
	if e, ok := s.vals["env"]; ok && (e.kind != 's' || e.str != "") {
		if e.kind != 'm' {
			return &ParseError{Line: e.line, Msg: "env must be a map of NAME: value"}
		}
		for _, k := range e.keys {
			val := e.vals[k]
			if val.kind != 's' {
				return &ParseError{Line: val.line, Msg: "env " + k + " must be a single value"}
			}
			env[k] = val.str
			def.Env = append(def.Env, k)
		}
	}
	f.Def.MCPServers = append(f.Def.MCPServers, def)
	f.Env[def.Name] = env
	return nil
}
