package app_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/app/config"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/cmd/rerun"
	"github.com/omega-gateway/omega/domain/catalog"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/handlers/pipeline"
	"github.com/omega-gateway/omega/prompts"
	"github.com/omega-gateway/omega/providers/providertest"
)

// promptSeparator ends each prompt in a recording Claude Code double's log.
const promptSeparator = "=====END-OF-PROMPT====="

// recordingClaude writes a Claude Code double that appends every prompt
// it is given (system prompt and message folded, as Claude Code gets
// them) to a log, and answers a message containing a key of replies with
// that reply (markers included), anything else with "echo: <last line>".
func recordingClaude(t *testing.T, replies map[string]string) (bin, promptLog string) {
	t.Helper()
	dir := t.TempDir()
	promptLog = filepath.Join(dir, "prompts.log")
	var cases strings.Builder
	for k, v := range replies {
		cases.WriteString("  *'" + k + "'*) reply='" + v + "';;\n")
	}
	bin = writeClaude(t, dir, `printf '%s\n`+promptSeparator+`\n' "$prompt" >> "`+promptLog+`"
reply="echo: $last"
case "$last" in
`+cases.String()+`esac
reply=$(printf '%s' "$reply" | sed ':a;N;$!ba;s/\n/\\n/g')
printf '{"type":"result","subtype":"success","is_error":false,"result":"%s","session_id":"sess-1","num_turns":1}\n' "$reply"
`)
	return bin, promptLog
}

// recordedPrompts lists the prompts the double was given, in order.
func recordedPrompts(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(string(b), promptSeparator+"\n")
	return parts[:len(parts)-1]
}

func lastPrompt(t *testing.T, path string) string {
	t.Helper()
	ps := recordedPrompts(t, path)
	if len(ps) == 0 {
		t.Fatal("no prompt recorded")
	}
	return ps[len(ps)-1]
}

func writeRoleFile(t *testing.T, dataDir, project, role string) {
	t.Helper()
	dir := filepath.Join(dataDir, "projects", project)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ROLE.md"), []byte(role), 0o600); err != nil {
		t.Fatal(err)
	}
}

func projectEventTypes(t *testing.T, n *node) []string {
	t.Helper()
	evs, err := n.rt.Store.Load(context.Background(), catalog.ProjectsStream, 1)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

// An active project's ROLE.md and badge are in the prompt and a
// deactivated one's are not; a changed ROLE.md is a new event and the
// next prompt has the new text; a re-run of an older turn reproduces the
// role of its time; a removed folder is a ProjectRemoved.
func TestProjectsReachThePrompt(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			claude, promptLog := recordingClaude(t, map[string]string{
				"switch to trader": `Switching.\nPROJECT_ACTIVATE: trader`,
				"leave the trader": `Done.\nPROJECT_DEACTIVATE`,
			})
			vars := baseVars(t, b, claude)
			vars["OMEGA_TIMEZONE"] = "UTC"
			data := vars["OMEGA_DATA_DIR"]
			writeRoleFile(t, data, "trader", "You are TRADER-ROLE-ONE: watch the markets.")
			writeRoleFile(t, data, "garden", "You are the gardener.")
			n := startNode(t, vars)
			ctx := context.Background()
			if got := projectEventTypes(t, n); len(got) != 2 || got[0] != "ProjectDefined" {
				t.Fatalf("imported at start: %v", got)
			}

			// /projects lists what the log records; a folder without ROLE.md is no project.
			if err := os.MkdirAll(filepath.Join(data, "projects", "notes"), 0o700); err != nil {
				t.Fatal(err)
			}
			if out := say(t, n, "ana", "/projects", "20s"); !strings.Contains(out.Reply, "- garden\n- trader") || strings.Contains(out.Reply, "notes") {
				t.Fatalf("/projects = %q", out.Reply)
			}
			if out := say(t, n, "ana", "/project notes", "20s"); out.Reply != i18n.More(i18n.English, i18n.ProjectUnknown, "notes") {
				t.Fatalf("/project notes = %q", out.Reply)
			}

			say(t, n, "ana", "hello", "20s")
			p := lastPrompt(t, promptLog)
			if !strings.Contains(p, "Available projects: garden, trader.") || !strings.Contains(p, "No project is active.") ||
				strings.Contains(p, "[Project:") || strings.Contains(p, "TRADER-ROLE") {
				t.Fatalf("prompt without an active project:\n%s", p)
			}

			if out := say(t, n, "ana", "please switch to trader", "20s"); out.Reply != "Switching." {
				t.Fatalf("activation reply %+v", out)
			}
			market := say(t, n, "ana", "how is the market", "20s")
			p = lastPrompt(t, promptLog)
			for _, want := range []string{"[Project: trader]", "You are TRADER-ROLE-ONE: watch the markets.", "Active project: trader."} {
				if !strings.Contains(p, want) {
					t.Fatalf("active project prompt lacks %q:\n%s", want, p)
				}
			}

			// A changed ROLE.md: one new event, the next prompt has the new text.
			writeRoleFile(t, data, "trader", "You are TRADER-ROLE-TWO: be cautious.")
			say(t, n, "ana", "and the bonds", "20s")
			p = lastPrompt(t, promptLog)
			if !strings.Contains(p, "TRADER-ROLE-TWO") || strings.Contains(p, "TRADER-ROLE-ONE") {
				t.Fatalf("prompt after the change:\n%s", p)
			}
			if got := projectEventTypes(t, n); len(got) != 3 || got[2] != "ProjectRoleChanged" {
				t.Fatalf("after the change: %v", got)
			}
			say(t, n, "ana", "and gold", "20s")
			if got := projectEventTypes(t, n); len(got) != 3 {
				t.Fatalf("an unchanged folder appended: %v", got)
			}

			// The re-run of the older turn reads the role of its time.
			if c := contextOf(t, n, market.TurnID); !strings.Contains(c.System+c.Prompt, "TRADER-ROLE-ONE") || c.ProjectsVersion != 2 {
				t.Fatalf("recorded context of the older turn: version %d\n%s\n%s", c.ProjectsVersion, c.System, c.Prompt)
			}
			cfg, err := config.LoadFrom(vars)
			if err != nil {
				t.Fatal(err)
			}
			res, err := rerun.Run(ctx, n.rt.Store, n.rt.Registry, cfg, market.TurnID, rerun.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Identical {
				t.Fatalf("the older turn re-ran differently:\n%s", strings.Join(res.Diff, "\n"))
			}

			// Deactivated: neither the role nor the badge.
			if out := say(t, n, "ana", "please leave the trader project", "20s"); out.Reply != "Done." {
				t.Fatalf("deactivation reply %+v", out)
			}
			say(t, n, "ana", "anything new", "20s")
			p = lastPrompt(t, promptLog)
			if strings.Contains(p, "[Project:") || strings.Contains(p, "TRADER-ROLE") || !strings.Contains(p, "No project is active.") {
				t.Fatalf("prompt after deactivation:\n%s", p)
			}

			// A removed folder is recorded and leaves the list.
			if err := os.RemoveAll(filepath.Join(data, "projects", "garden")); err != nil {
				t.Fatal(err)
			}
			say(t, n, "ana", "what projects are there", "20s")
			if got := projectEventTypes(t, n); len(got) != 4 || got[3] != "ProjectRemoved" {
				t.Fatalf("after removal: %v", got)
			}
			if p = lastPrompt(t, promptLog); !strings.Contains(p, "Available projects: trader.") {
				t.Fatalf("prompt after removal:\n%s", p)
			}
		})
	}
}

// imageChannel is a platform double that delivers images.
type imageChannel struct{ fakeChannel }

func (*imageChannel) ReceivesImages() bool { return true }

// The system prompt describes what the process does and nothing it does
// not: with and without the heartbeat, with and without a channel that
// delivers images, the read-only sandbox, the channels that run, and the
// provider's tools (Claude Code has them; the Anthropic and
// OpenAI-compatible APIs only write text, so they are told of no
// workspace, sandbox or tool). Checked on the system prompt each provider
// received, for a message that opens every gated section.
func TestPromptDescribesOnlyWhatRuns(t *testing.T) {
	noScheduler := prompts.Capabilities{Heartbeat: true, Sandbox: "none"}
	configs := []struct {
		name     string
		vars     map[string]string
		channels []channels.Channel
		given    *prompts.Capabilities // as a re-run passes them (no switch turns the scheduler off)
		expected prompts.Capabilities  // with tools; a provider without them drops tools and images
	}{
		{"heartbeat, images, telegram", map[string]string{"OMEGA_HEARTBEAT_ENABLED": "true"},
			[]channels.Channel{&imageChannel{fakeChannel{name: "telegram"}}}, nil,
			prompts.Capabilities{Heartbeat: true, Scheduler: true, Images: true, Sandbox: "workspace", Channels: []string{"http", "telegram"}}},
		{"no heartbeat, whatsapp", map[string]string{"OMEGA_HEARTBEAT_ENABLED": "false"},
			[]channels.Channel{&fakeChannel{name: "whatsapp"}}, nil,
			prompts.Capabilities{Scheduler: true, Sandbox: "workspace", Channels: []string{"http", "whatsapp"}}},
		{"read-only, images, no chat channel", map[string]string{"OMEGA_HEARTBEAT_ENABLED": "false", "OMEGA_SANDBOX": "readonly"},
			[]channels.Channel{&imageChannel{fakeChannel{name: "photos"}}}, nil,
			prompts.Capabilities{Scheduler: true, Images: true, Sandbox: "readonly", Channels: []string{"http", "photos"}}},
		{"heartbeat, read-only, telegram", map[string]string{"OMEGA_HEARTBEAT_ENABLED": "true", "OMEGA_SANDBOX": "readonly"},
			[]channels.Channel{&fakeChannel{name: "telegram"}}, nil,
			prompts.Capabilities{Heartbeat: true, Scheduler: true, Sandbox: "readonly", Channels: []string{"http", "telegram"}}},
		{"given: no scheduler, unsandboxed", nil, nil, &noScheduler, noScheduler},
	}
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			for _, prov := range promptProviders() {
				t.Run(prov.name, func(t *testing.T) {
					for _, c := range configs {
						t.Run(c.name, func(t *testing.T) {
							expected := c.expected
							if !prov.tools && c.given == nil {
								expected.NoTools, expected.Images = true, false
							}
							system := promptDescribesOnlyWhatRuns(t, b, prov, c.vars, c.channels, c.given, expected)
							if !prov.tools && c.given == nil && strings.Contains(system, "sandbox mode") {
								t.Errorf("a provider without tools is told of a sandbox:\n%s", system)
							}
						})
					}
				})
			}
		})
	}
}

// promptDescribesOnlyWhatRuns runs one turn with the configuration and
// checks the system prompt the provider received against
// prompts.Described; it returns that prompt, lowered.
func promptDescribesOnlyWhatRuns(t *testing.T, b backend, prov promptProvider, vars map[string]string, extra []channels.Channel,
	given *prompts.Capabilities, expected prompts.Capabilities) string {
	t.Helper()
	all := baseVars(t, b, "")
	system := prov.start(t, all)
	for k, v := range vars {
		all[k] = v
	}
	auth := &pipeline.Auth{Allowed: map[string][]string{"testchat": {"allowed"}}}
	n := startNodeWith(t, all, app.RuntimeOptions{Channels: extra, Auth: auth, Capabilities: given})
	out := say(t, n, "bo", "remind me tomorrow about the project, the heartbeat and my skills", "20s")
	if got := contextOf(t, n, out.TurnID).Capabilities; strings.Join(got, ",") != strings.Join(expected.Names(), ",") {
		t.Fatalf("recorded capabilities %v, want %v", got, expected.Names())
	}
	received := system()
	lowered := strings.ToLower(received)
	for _, section := range []string{"PROJECT_ACTIVATE: <name>", "LIMITATION:"} {
		if !strings.Contains(lowered, strings.ToLower(section)) {
			t.Fatalf("a gated section is missing (%q):\n%s", section, received)
		}
	}
	if strings.Contains(received, "<!--") || strings.Contains(received, prompts.ChannelsPlaceholder) || strings.Contains(received, "time.A heartbeat") {
		t.Errorf("the prompt is not resolved cleanly:\n%s", received)
	}
	for _, d := range prompts.Described {
		for _, phrase := range d.Phrases {
			has := strings.Contains(lowered, strings.ToLower(phrase))
			if d.On(expected) && !has {
				t.Errorf("%s is on but the prompt lacks %q", d.Name, phrase)
			}
			if !d.On(expected) && has {
				t.Errorf("%s is off but the prompt says %q", d.Name, phrase)
			}
		}
	}
	return lowered
}

// promptProvider is a provider double that records the system prompt it
// receives: start configures vars for it and returns what the last call
// was given as its system prompt.
type promptProvider struct {
	name  string
	tools bool
	start func(t *testing.T, vars map[string]string) (system func() string)
}

func promptProviders() []promptProvider {
	return []promptProvider{
		{"claude-code", true, func(t *testing.T, vars map[string]string) func() string {
			claude, promptLog := recordingClaude(t, nil)
			vars["OMEGA_CLAUDE_BIN"] = claude
			return func() string {
				full := lastPrompt(t, promptLog)
				return full[:strings.LastIndex(full, "[User]: ")]
			}
		}},
		{"anthropic", false, func(t *testing.T, vars map[string]string) func() string {
			var last atomic.Value
			srv := providertest.NewAnthropicServer(t, func(req providertest.MessagesRequest) (int, string, map[string]string) {
				last.Store(req.System)
				return 200, providertest.AnthropicReply(req.Model, "noted"), nil
			})
			vars["OMEGA_PROVIDER"], vars["OMEGA_ANTHROPIC_API_KEY"], vars["OMEGA_ANTHROPIC_BASE_URL"] = "anthropic", "test-key", srv.URL
			return func() string { s, _ := last.Load().(string); return s }
		}},
		{"openai", false, func(t *testing.T, vars map[string]string) func() string {
			var last atomic.Value
			srv := providertest.NewOpenAIServer(t, func(req providertest.ChatRequest) (int, string, map[string]string) {
				for _, m := range req.Messages {
					if m.Role == "system" {
						last.Store(m.Content)
					}
				}
				return 200, providertest.OpenAIReply(req.Model, "noted"), nil
			})
			vars["OMEGA_PROVIDER"], vars["OMEGA_OPENAI_BASE_URL"] = "openai", srv.URL
			return func() string { s, _ := last.Load().(string); return s }
		}},
	}
}

// The skills paragraph is in the prompt only once a skill is installed
// (a folder with SKILL.md), looked at per turn.
func TestSkillsParagraphFollowsInstalledSkills(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			claude, promptLog := recordingClaude(t, nil)
			vars := baseVars(t, b, claude)
			n := startNode(t, vars)
			skills := filepath.Join(vars["OMEGA_DATA_DIR"], "skills", "weather")
			if err := os.MkdirAll(skills, 0o700); err != nil {
				t.Fatal(err)
			}
			out := say(t, n, "cy", "report a bug please", "20s")
			if p := lastPrompt(t, promptLog); strings.Contains(p, "SKILL_IMPROVE") || !strings.Contains(p, "BUG_REPORT") {
				t.Fatalf("no skill installed (a folder without SKILL.md), yet:\n%s", p)
			}
			if got := strings.Join(contextOf(t, n, out.TurnID).Capabilities, ","); strings.Contains(got, "skills") {
				t.Fatalf("capabilities %s", got)
			}
			if err := os.WriteFile(filepath.Join(skills, "SKILL.md"), []byte("---\nname: weather\n---\nLook it up."), 0o600); err != nil {
				t.Fatal(err)
			}
			out = say(t, n, "cy", "report another bug", "20s")
			if p := lastPrompt(t, promptLog); !strings.Contains(p, "SKILL_IMPROVE: <skill name> | <lesson>") {
				t.Fatalf("a skill is installed, yet:\n%s", p)
			}
			if got := strings.Join(contextOf(t, n, out.TurnID).Capabilities, ","); !strings.Contains(got, "skills") {
				t.Fatalf("capabilities %s", got)
			}
		})
	}
}
