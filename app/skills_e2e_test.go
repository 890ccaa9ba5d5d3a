package app_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/omega-gateway/omega/app/config"
	"github.com/omega-gateway/omega/cmd/rerun"
	"github.com/omega-gateway/omega/domain/turn"
)

// skillsClaude writes a Claude Code double that keeps every call's prompt
// in <dir>/<n>.prompt and, when it was given --mcp-config, a copy of that
// file in <dir>/<n>.mcp and its path in <dir>/<n>.mcppath (omega removes
// the file after the call). A message about a lesson is answered with a
// SKILL_IMPROVE marker.
func skillsClaude(t *testing.T) (bin, dir string) {
	t.Helper()
	home := t.TempDir()
	dir = filepath.Join(home, "calls")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	bin = filepath.Join(home, "claude")
	script := `#!/bin/sh
prompt=""; resume=""; mcp=""
while [ $# -gt 0 ]; do
  case "$1" in
    --resume) resume="$2"; shift 2;;
    --mcp-config) mcp="$2"; shift 2;;
    *) shift;;
  esac
done
prompt=$(cat)
n=$(ls "` + dir + `" | grep -c '\.prompt$')
printf '%s' "$prompt" > "` + dir + `/$n.prompt"
if [ -n "$mcp" ]; then cp "$mcp" "` + dir + `/$n.mcp"; printf '%s' "$mcp" > "` + dir + `/$n.mcppath"; fi
reply="fine"
case "$prompt" in *'the lesson is'*) reply="Noted. SKILL_IMPROVE: weather | always give temperatures in Celsius";; esac
printf '{"type":"result","subtype":"success","is_error":false,"result":"%s","session_id":"%s","num_turns":1}\n' "$reply" "${resume:-sess-1}"
`
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, dir
}

// call reads what the double recorded for call n (0-based): its prompt,
// its MCP config ("" without one) and the config's path.
func call(t *testing.T, dir string, n int) (prompt, mcp, mcpPath string) {
	t.Helper()
	read := func(ext string) string {
		b, err := os.ReadFile(filepath.Join(dir, strconv.Itoa(n)+ext))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return string(b)
	}
	return read(".prompt"), read(".mcp"), read(".mcppath")
}

const (
	weatherSkill = `---
name: weather
description: Weather forecasts for any city
triggers: [weather, "forecast"]
mcp_servers:
  - name: wx
    command: wx-mcp
    args: [--units, metric]
    env:
      WX_API_KEY: top-secret-key
---
WEATHER-INSTRUCTIONS: use the wx tools for every forecast.
`
	notesSkill = `---
name: notes
description: Keeps notes
triggers:
  - note
  - notebook
---
NOTES-INSTRUCTIONS: write notes to notes.md.
`
	brokenSkill = `---
name: broken
triggers: [oops
---
BROKEN-INSTRUCTIONS
`
)

func TestSkillsEndToEnd(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			claude, dir := skillsClaude(t)
			vars := baseVars(t, b, claude)
			for folder, text := range map[string]string{"weather": weatherSkill, "notes": notesSkill, "broken": brokenSkill} {
				p := filepath.Join(vars["OMEGA_DATA_DIR"], "skills", folder)
				if err := os.MkdirAll(p, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(p, "SKILL.md"), []byte(text), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			n := startNode(t, vars)

			// A triggered skill: its instructions and MCP servers reach the call.
			first := say(t, n, "ana", "What's the WEATHER in Madrid?", "20s")
			if first.Status != turn.StatusOK {
				t.Fatalf("turn: %+v", first)
			}
			prompt, mcp, path := call(t, dir, 0)
			for _, want := range []string{"WEATHER-INSTRUCTIONS", "Available skills", "weather: Weather forecasts for any city", "notes: Keeps notes"} {
				if !strings.Contains(prompt, want) {
					t.Fatalf("first prompt lacks %q:\n%s", want, prompt)
				}
			}
			if strings.Contains(prompt, "NOTES-INSTRUCTIONS") || strings.Contains(prompt, "broken") {
				t.Fatalf("first prompt has an untriggered or broken skill:\n%s", prompt)
			}
			var cfg struct {
				MCPServers map[string]struct {
					Command string            `json:"command"`
					Args    []string          `json:"args"`
					Env     map[string]string `json:"env"`
				} `json:"mcpServers"`
			}
			if err := json.Unmarshal([]byte(mcp), &cfg); err != nil {
				t.Fatalf("MCP config %q: %v", mcp, err)
			}
			wx := cfg.MCPServers["wx"]
			if len(cfg.MCPServers) != 1 || wx.Command != "wx-mcp" || strings.Join(wx.Args, " ") != "--units metric" || wx.Env["WX_API_KEY"] != "top-secret-key" {
				t.Fatalf("MCP config = %s", mcp)
			}
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Fatalf("MCP config %s still exists after the call (%v)", path, err)
			}
			evs := turnEvents(t, n, first.TurnID)
			var built turn.ContextBuilt
			for _, e := range evs {
				if strings.Contains(string(e.Data), "top-secret-key") {
					t.Fatalf("%s records the MCP secret: %s", e.Type, e.Data)
				}
				if e.Type == built.EventType() {
					if err := json.Unmarshal(e.Data, &built); err != nil {
						t.Fatal(err)
					}
				}
			}
			if strings.Join(built.Skills, ",") != "weather" || strings.Join(built.MCPServers, ",") != "weather/wx" {
				t.Fatalf("context records skills %v, MCP servers %v", built.Skills, built.MCPServers)
			}

			// The next, untriggered call gets neither.
			say(t, n, "ana", "thanks, that's all", "20s")
			prompt, mcp, _ = call(t, dir, 1)
			if strings.Contains(prompt, "WEATHER-INSTRUCTIONS") || mcp != "" {
				t.Fatalf("an untriggered call got the skill: mcp %q, prompt:\n%s", mcp, prompt)
			}

			// Another skill's trigger (a resumed session: the continuation).
			say(t, n, "ana", "open my notebook", "20s")
			if prompt, mcp, _ = call(t, dir, 2); !strings.Contains(prompt, "NOTES-INSTRUCTIONS") || strings.Contains(prompt, "WEATHER-INSTRUCTIONS") || mcp != "" {
				t.Fatalf("notes call: mcp %q, prompt:\n%s", mcp, prompt)
			}

			// A lesson joins the skill from the next matching turn on.
			say(t, n, "ana", "about the weather, the lesson is: use Celsius", "20s")
			if prompt, _, _ = call(t, dir, 3); strings.Contains(prompt, "temperatures in Celsius") {
				t.Fatalf("the lesson is in the prompt before it was learned:\n%s", prompt)
			}
			say(t, n, "ana", "forecast for tomorrow?", "20s")
			if prompt, mcp, _ = call(t, dir, 4); !strings.Contains(prompt, "always give temperatures in Celsius") || !strings.Contains(prompt, "WEATHER-INSTRUCTIONS") || mcp == "" {
				t.Fatalf("the lesson is not in the next matching prompt (mcp %q):\n%s", mcp, prompt)
			}

			// /skills lists the skills that loaded, with triggers and lessons.
			out := say(t, n, "ana", "/skills", "20s")
			for _, want := range []string{"weather: Weather forecasts for any city", "Triggers: weather, forecast", "MCP servers: wx",
				"always give temperatures in Celsius", "notes: Keeps notes", "Triggers: note, notebook"} {
				if !strings.Contains(out.Reply, want) {
					t.Fatalf("/skills lacks %q:\n%s", want, out.Reply)
				}
			}
			if strings.Contains(out.Reply, "broken") || strings.Contains(out.Reply, "top-secret") {
				t.Fatalf("/skills lists the broken skill or a secret:\n%s", out.Reply)
			}
		})
	}
}

// The classifier sees the skills' names and descriptions.
func TestSkillsReachTheClassifier(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			claude, dir := skillsClaude(t)
			vars := baseVars(t, b, claude)
			vars["OMEGA_CLASSIFY"] = "true"
			p := filepath.Join(vars["OMEGA_DATA_DIR"], "skills", "weather")
			if err := os.MkdirAll(p, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(p, "SKILL.md"), []byte(weatherSkill), 0o600); err != nil {
				t.Fatal(err)
			}
			n := startNode(t, vars)
			say(t, n, "ana", "research the weather in Madrid and then compare it with Lisbon", "20s")
			prompt, mcp, _ := call(t, dir, 0)
			if !strings.Contains(prompt, "Request: ") || !strings.Contains(prompt, "Available skills: weather: Weather forecasts for any city") {
				t.Fatalf("classification prompt lacks the skills:\n%s", prompt)
			}
			if mcp != "" || strings.Contains(prompt, "WEATHER-INSTRUCTIONS") {
				t.Fatalf("the classifier got the skill's instructions or tools (mcp %q)", mcp)
			}
		})
	}
}

// A re-run reproduces the prompt of its time: the skill as it was when
// the turn ran, even after its SKILL.md changed.
func TestRerunKeepsTheSkillsOfItsTime(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			claude, _ := skillsClaude(t)
			vars := baseVars(t, b, claude)
			file := filepath.Join(vars["OMEGA_DATA_DIR"], "skills", "weather", "SKILL.md")
			if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, []byte(weatherSkill), 0o600); err != nil {
				t.Fatal(err)
			}
			n := startNode(t, vars)
			first := say(t, n, "ana", "weather in Madrid?", "20s")
			if err := os.WriteFile(file, []byte(strings.Replace(weatherSkill, "WEATHER-INSTRUCTIONS", "CHANGED-INSTRUCTIONS", 1)), 0o600); err != nil {
				t.Fatal(err)
			}
			say(t, n, "ana", "weather in Lisbon?", "20s") // imports the change

			cfg, err := config.LoadFrom(vars)
			if err != nil {
				t.Fatal(err)
			}
			res, err := rerun.Run(context.Background(), n.rt.Store, n.rt.Registry, cfg, first.TurnID, rerun.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Identical {
				t.Fatalf("the re-run differs:\n%s", strings.Join(res.Diff, "\n"))
			}
		})
	}
}
