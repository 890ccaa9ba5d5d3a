package prompts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omega-gateway/omega/domain/i18n"
)

func TestDefaults(t *testing.T) {
	set := Defaults()
	for _, name := range RequiredSections {
		if set.Section(name) == "" {
			t.Errorf("default section %s is empty", name)
		}
	}
	markers := map[string][]string{
		"Scheduling": {"SCHEDULE: <description> | <ISO 8601 datetime> | <repeat>",
			"SCHEDULE_ACTION: <what to do> | <ISO 8601 datetime> | <repeat>",
			"CANCEL_TASK: <id prefix>", "UPDATE_TASK: <id prefix> | <description> | <ISO 8601 datetime> | <repeat>",
			"ACTION_OUTCOME:", "User's scheduled tasks", "UTC"},
		"Projects": {"PROJECT_ACTIVATE: <name>", "PROJECT_DEACTIVATE", "ROLE.md"},
		"Meta": {"HEARTBEAT_ADD: <item>", "HEARTBEAT_REMOVE: <item>", "HEARTBEAT_INTERVAL: <minutes>",
			"HEARTBEAT_SUPPRESS_SECTION:", "HEARTBEAT_UNSUPPRESS_SECTION:", "HEARTBEAT_OK",
			"LIMITATION: <title> | <description> | <proposed plan>", "SELF_HEAL: <description> | <verification test>",
			"SELF_HEAL_RESOLVED", "BUG_REPORT: <description>", "SKILL_IMPROVE: <skill name> | <lesson>", "WHATSAPP_QR"},
		"System": {"LANG_SWITCH: <language>", "PERSONALITY: <style>", "FORGET_CONVERSATION", "PURGE_FACTS",
			"REWARD: <score>|<domain>|<lesson>", "LESSON: <domain>|<rule>", "SILENT",
			"Speak to the user in their language; speak to the system in markers"},
	}
	for section, wants := range markers {
		for _, want := range wants {
			if !strings.Contains(set.Section(section), want) {
				t.Errorf("section %s does not teach %q", section, want)
			}
		}
	}
	for _, lang := range i18n.Languages() {
		if set.Welcome(lang) == set.Welcome(i18n.English) && lang != i18n.English {
			t.Errorf("no %s welcome", lang)
		}
		if !strings.Contains(set.Welcome(lang), "/help") {
			t.Errorf("%s welcome does not mention /help", lang)
		}
	}
	if !strings.HasPrefix(set.Welcome("es"), "Hola") || !strings.HasPrefix(set.Welcome("klingon"), "Hi") {
		t.Error("Welcome must accept codes and fall back to English")
	}
	if !strings.Contains(set.Facts(), "key: value") || !strings.Contains(set.Facts(), "none") {
		t.Error("facts prompt must ask for key: value lines or none")
	}
	if set.Summarize() == "" {
		t.Error("empty summarize prompt")
	}
	hb := set.HeartbeatPrompt("- disk below 90%\n")
	if !strings.Contains(hb, "Checklist:\n- disk below 90%") || strings.Contains(hb, ChecklistPlaceholder) {
		t.Errorf("heartbeat prompt not filled:\n%s", hb)
	}
	if set.Origin(SystemPromptFile) != "default" {
		t.Errorf("origin = %q", set.Origin(SystemPromptFile))
	}
}

func TestLoadWithoutOverridesIsDefaults(t *testing.T) {
	set, err := Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if set.Section("Identity") != Defaults().Section("Identity") || set.Facts() != Defaults().Facts() {
		t.Error("Load with no overrides differs from Defaults")
	}
}

const validSystem = `# custom
## Identity
I am Zed.
## Soul
Calm.
## System
Rules.
## Scheduling
Sched.
## Projects
Proj.
## Meta
Meta.
`

func writeOverride(t *testing.T, dir, file, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "prompts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "prompts", file), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadOverride(t *testing.T) {
	dir := t.TempDir()
	writeOverride(t, dir, SystemPromptFile, validSystem)
	writeOverride(t, dir, WelcomeFile, "## English\nYo.\n## español\n¡Hola!\n")
	writeOverride(t, dir, FactsFile, "facts please\n")
	set, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := set.Section("Identity"); got != "I am Zed." {
		t.Errorf("Identity = %q", got)
	}
	if got := set.Sections()["Meta"]; got != "Meta." {
		t.Errorf("Meta = %q", got)
	}
	if got := set.Welcome("Spanish"); got != "¡Hola!" {
		t.Errorf("Spanish welcome = %q", got)
	}
	if got := set.Welcome("German"); got != "Yo." {
		t.Errorf("German falls back to English, got %q", got)
	}
	if set.Facts() != "facts please" {
		t.Errorf("Facts = %q", set.Facts())
	}
	if set.Summarize() != Defaults().Summarize() {
		t.Error("files without override must keep the default")
	}
	if want := filepath.Join(dir, "prompts", FactsFile); set.Origin(FactsFile) != want {
		t.Errorf("Origin = %q, want %q", set.Origin(FactsFile), want)
	}
}

func TestLoadBadOverride(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		text    string
		wantErr []string
	}{
		{"missing section", SystemPromptFile, strings.Replace(validSystem, "## Soul\nCalm.\n", "", 1),
			[]string{SystemPromptFile, "## Soul"}},
		{"empty section", SystemPromptFile, strings.Replace(validSystem, "Meta.", "", 1),
			[]string{SystemPromptFile, "## Meta"}},
		{"duplicate section", SystemPromptFile, validSystem + "## Soul\nagain\n",
			[]string{SystemPromptFile, "twice"}},
		{"unknown welcome language", WelcomeFile, "## English\nhi\n## Klingon\nQapla'\n",
			[]string{WelcomeFile, "Klingon"}},
		{"welcome without English", WelcomeFile, "## Spanish\nhola\n",
			[]string{WelcomeFile, "English"}},
		{"empty facts", FactsFile, "  \n", []string{FactsFile, "empty"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeOverride(t, dir, tt.file, tt.text)
			_, err := Load(dir)
			if err == nil {
				t.Fatal("Load accepted a malformed override")
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
		})
	}
}

func TestLoadUnreadableOverride(t *testing.T) {
	dir := t.TempDir()
	// A directory where a file is expected cannot be read.
	if err := os.MkdirAll(filepath.Join(dir, "prompts", FactsFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), FactsFile) {
		t.Errorf("err = %v, want a read error naming %s", err, FactsFile)
	}
}

func TestHeartbeatClassifyPrompt(t *testing.T) {
	p := Defaults().HeartbeatClassify("1. a\n2. b")
	if !strings.Contains(p, "1. a\n2. b") || strings.Contains(p, ItemsPlaceholder) || !strings.Contains(p, "DIRECT") {
		t.Fatalf("classification prompt:\n%s", p)
	}
}

// A HEARTBEAT.md override without the placeholder is the user's checklist
// (the heartbeat imports it), not a template: the default template stays.
func TestHeartbeatChecklistFileKeepsDefaultTemplate(t *testing.T) {
	dir := t.TempDir()
	writeOverride(t, dir, HeartbeatFile, "- check disk\n")
	set, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if set.Heartbeat() != Defaults().Heartbeat() {
		t.Fatal("a checklist file replaced the heartbeat template")
	}
}
