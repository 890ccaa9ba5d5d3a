package skills

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/omega-gateway/omega/domain/catalog"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name     string
		file     string
		want     catalog.SkillDefined // Body, Hash and File not compared
		wantEnv  map[string]map[string]string
		errLine  int    // > 0: a ParseError at this line
		errMatch string // part of its message
	}{
		{
			name: "flow lists and a list of servers",
			file: "---\nname: GitHub\ndescription: Work with issues and pull requests # a comment\ntriggers: [github, \"pull request\", 'issue, tracker']\nmcp_servers:\n  - name: gh\n    command: npx\n    args: [-y, \"@mcp/server-github\"]\n    env:\n      GITHUB_TOKEN: \"secret-1\"\n---\nUse the gh server.\n",
			want: catalog.SkillDefined{Name: "GitHub", Description: "Work with issues and pull requests", Triggers: []string{"github", "pull request", "issue, tracker"},
				MCPServers: []catalog.MCPServerDef{{Name: "gh", Command: "npx", Args: []string{"-y", "@mcp/server-github"}, Env: []string{"GITHUB_TOKEN"}}}},
			wantEnv: map[string]map[string]string{"gh": {"GITHUB_TOKEN": "secret-1"}},
		},
		{
			name: "block lists, name from the folder, comma triggers",
			file: "---\n# comment line\ndescription: 'It''s the weather'\nkeywords: weather, forecast\nmcp:\n- name: w\n  command: /bin/weather\n  args:\n    - --city\n    - Madrid\n---\nbody\n",
			want: catalog.SkillDefined{Name: "folder", Description: "It's the weather", Triggers: []string{"weather", "forecast"},
				MCPServers: []catalog.MCPServerDef{{Name: "w", Command: "/bin/weather", Args: []string{"--city", "Madrid"}}}},
			wantEnv: map[string]map[string]string{"w": {}},
		},
		{
			name:    "servers as a map like Claude Code's mcpServers, unknown keys ignored",
			file:    "---\nname: db\nalways: true\nmetadata: {\"nanobot\": {\"requires\": 1}}\nmcpServers:\n  pg:\n    command: pg-mcp\n    env:\n      URL: postgres://x\n---\nbody\n",
			want:    catalog.SkillDefined{Name: "db", MCPServers: []catalog.MCPServerDef{{Name: "pg", Command: "pg-mcp", Env: []string{"URL"}}}},
			wantEnv: map[string]map[string]string{"pg": {"URL": "postgres://x"}},
		},
		{name: "no front matter", file: "just text\n", errLine: 1, errMatch: "must start with a front matter"},
		{name: "unclosed front matter", file: "---\nname: x\n", errLine: 1, errMatch: "never closed"},
		{name: "not key value", file: "---\nname: x\njust words\n---\nbody\n", errLine: 3, errMatch: "expected \"key: value\""},
		{name: "bad indentation", file: "---\nname: x\n    description: y\n---\nbody\n", errLine: 3, errMatch: "unexpected indentation"},
		{name: "unterminated list", file: "---\nname: x\ntriggers: [a, b\n---\nbody\n", errLine: 3, errMatch: "missing ]"},
		{name: "server without command", file: "---\nname: x\nmcp_servers:\n  - name: s\n---\nbody\n", errLine: 4, errMatch: "needs a name and a command"},
		{name: "duplicate key", file: "---\nname: x\nname: y\n---\nbody\n", errLine: 3, errMatch: "duplicate key"},
		{name: "colon in an unquoted value", file: "---\ndescription: Deploy: the app\n---\nbody\n", errLine: 2, errMatch: "needs quotes"},
		{name: "unterminated quote", file: "---\nname: x\ndescription: 'oops\n---\nbody\n", errLine: 3, errMatch: "unterminated quoted string"},
		{name: "alias of itself", file: "---\nname: x\na: &x [*x]\n---\nbody\n", errLine: 3, errMatch: "nests too deep"},
		{name: "aliases that multiply", file: "---\nname: x\na: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n---\nbody\n", errLine: 6, errMatch: "repeats too much"},
		{name: "front matter a list", file: "---\n- a\n- b\n---\nbody\n", errLine: 2, errMatch: "key: value pairs"},
		{name: "tab indentation", file: "---\nname: x\nmcp:\n\t- name: s\n---\nbody\n", errLine: 4, errMatch: "tabs"},
		{name: "empty body", file: "---\nname: x\n---\n\n", errLine: 5, errMatch: "no instructions"},
		{name: "name with a slash", file: "---\nname: a/b\n---\nbody\n", errLine: 2, errMatch: "cannot contain"},
		{name: "env not a map", file: "---\nname: x\nmcp:\n  - name: s\n    command: c\n    env: [A]\n---\nbody\n", errLine: 6, errMatch: "env must be a map"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse("skills/folder/SKILL.md", "folder", []byte(tt.file))
			if tt.errLine > 0 {
				var pe *ParseError
				if !errors.As(err, &pe) {
					t.Fatalf("err = %v, want a ParseError", err)
				}
				if pe.Line != tt.errLine || !strings.Contains(pe.Msg, tt.errMatch) || !strings.HasPrefix(err.Error(), "skills/folder/SKILL.md:") {
					t.Fatalf("err = %v, want line %d with %q", err, tt.errLine, tt.errMatch)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := f.Def
			if got.Body == "" || len(got.Hash) != 64 {
				t.Fatalf("body %q, hash %q", got.Body, got.Hash)
			}
			got.Body, got.Hash, got.File = "", "", ""
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
			if !reflect.DeepEqual(f.Env, tt.wantEnv) {
				t.Fatalf("env = %v, want %v", f.Env, tt.wantEnv)
			}
		})
	}
}

// YAML as users write it in SKILL.md files elsewhere; the former hand
// parser refused or mis-read each of these.
func TestParseYAMLUsersWrite(t *testing.T) {
	tests := []struct {
		name    string
		fm      string
		want    catalog.SkillDefined
		wantEnv map[string]map[string]string
	}{
		{
			name: "literal block description",
			fm:   "name: x\ndescription: |\n  First line.\n  Second: line.\n",
			want: catalog.SkillDefined{Name: "x", Description: "First line.\nSecond: line."},
		},
		{
			name: "folded block description",
			fm:   "name: x\ndescription: >-\n  Use when the user\n  asks about git.\n",
			want: catalog.SkillDefined{Name: "x", Description: "Use when the user asks about git."},
		},
		{
			name: "plain string over two lines",
			fm:   "name: x\ndescription: Work with issues\n  and pull requests\n",
			want: catalog.SkillDefined{Name: "x", Description: "Work with issues and pull requests"},
		},
		{
			name: "quoted strings with colons and hashes",
			fm:   "name: \"deploy: prod\"\ndescription: 'Usage: run it # not a comment'\ntriggers: [\"a: b\", 'c#d']\n",
			want: catalog.SkillDefined{Name: "deploy: prod", Description: "Usage: run it # not a comment", Triggers: []string{"a: b", "c#d"}},
		},
		{
			name: "flow list over lines with comments",
			fm:   "name: x # the name\n# a comment\ntriggers: [\n  git,  # the tool\n  github,\n]\n",
			want: catalog.SkillDefined{Name: "x", Triggers: []string{"git", "github"}},
		},
		{
			name: "nested server map with block lists, comments and a multi-line env value",
			fm: "name: x\nmcpServers:\n  # the database\n  pg:\n    command: pg-mcp\n    args:\n      - --port\n      - 08080 # kept as written\n" +
				"    env:\n      URL: \"postgres://u:p@h/db?sslmode=disable\"\n      NOTE: >\n        two\n        lines\n",
			want:    catalog.SkillDefined{Name: "x", MCPServers: []catalog.MCPServerDef{{Name: "pg", Command: "pg-mcp", Args: []string{"--port", "08080"}, Env: []string{"URL", "NOTE"}}}},
			wantEnv: map[string]map[string]string{"pg": {"URL": "postgres://u:p@h/db?sslmode=disable", "NOTE": "two lines"}},
		},
		{
			name:    "anchors and aliases",
			fm:      "name: x\nmcp:\n  - name: a\n    command: &cmd run-mcp\n  - name: b\n    command: *cmd\n",
			want:    catalog.SkillDefined{Name: "x", MCPServers: []catalog.MCPServerDef{{Name: "a", Command: "run-mcp"}, {Name: "b", Command: "run-mcp"}}},
			wantEnv: map[string]map[string]string{"a": {}, "b": {}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse("SKILL.md", "folder", []byte("---\n"+tt.fm+"---\nbody\n"))
			if err != nil {
				t.Fatal(err)
			}
			got := f.Def
			got.Body, got.Hash, got.File = "", "", ""
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
			if tt.wantEnv == nil {
				tt.wantEnv = map[string]map[string]string{}
			}
			if !reflect.DeepEqual(f.Env, tt.wantEnv) {
				t.Fatalf("env = %v, want %v", f.Env, tt.wantEnv)
			}
		})
	}
}

// A changed file is a changed hash; the same file is the same hash.
func TestParseHash(t *testing.T) {
	a, _ := Parse("p", "x", []byte("---\nname: x\n---\nbody one\n"))
	b, _ := Parse("p", "x", []byte("---\nname: x\n---\nbody one\n"))
	c, _ := Parse("p", "x", []byte("---\nname: x\n---\nbody two\n"))
	if a.Def.Hash != b.Def.Hash || a.Def.Hash == c.Def.Hash {
		t.Fatalf("hashes %s %s %s", a.Def.Hash, b.Def.Hash, c.Def.Hash)
	}
}
