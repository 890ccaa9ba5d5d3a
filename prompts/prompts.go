// Package prompts holds the prompt texts omega sends to models and users:
// embedded defaults, each overridable by a file in $dataDir/prompts/.
package prompts

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/omega-gateway/omega/domain/i18n"
)

//go:embed defaults/*
var defaults embed.FS

// File names, both in defaults/ and in the override directory.
const (
	SystemPromptFile = "SYSTEM_PROMPT.md"
	WelcomeFile      = "WELCOME.md"
	HeartbeatFile    = "HEARTBEAT.md"
	ClassifyFile     = "HEARTBEAT_CLASSIFY.md"
	SummarizeFile    = "SUMMARIZE.md"
	FactsFile        = "FACTS.md"
	SandboxFile      = "SANDBOX.md"
)

// RequiredSections must all be present (and non-empty) in SYSTEM_PROMPT.md.
// An override must be complete: silently mixing a user's file with default
// sections would make the prompt hard to reason about.
var RequiredSections = []string{"Identity", "Soul", "System", "Scheduling", "Projects", "Meta"}

// ChecklistPlaceholder is replaced by the heartbeat checklist in HEARTBEAT.md.
const ChecklistPlaceholder = "{checklist}"

// ItemsPlaceholder is replaced by the numbered items in HEARTBEAT_CLASSIFY.md.
const ItemsPlaceholder = "{items}"

// Set is a loaded, validated set of prompts. It is read-only after Load.
type Set struct {
	// raw are the SYSTEM_PROMPT.md sections as written, conditions and
	// all; sections are them resolved for the capabilities of For (all
	// on until For is called).
	raw          map[string]string
	sections     map[string]string
	welcome      map[string]string // canonical language name -> text
	heartbeat    string            // resolved like sections, from heartbeatRaw
	heartbeatRaw string
	classify     string
	summarize    string
	facts        string
	sandbox      map[string]string // sandbox mode -> constraint text
	origins      map[string]string // file name -> "default" or override path
	// forCaps, shared by the copies For makes, keeps what For made.
	forCaps *resolvedSets
}

// Section returns the text of a SYSTEM_PROMPT.md section ("" if absent).
func (s *Set) Section(name string) string { return s.sections[name] }

// Sections returns a copy of all SYSTEM_PROMPT.md sections by name, the
// shape promptctx.Input.Prompts takes.
func (s *Set) Sections() map[string]string {
	out := make(map[string]string, len(s.sections))
	for k, v := range s.sections {
		out[k] = v
	}
	return out
}

// Welcome returns the welcome text for lang (a name or code), falling back
// to English.
func (s *Set) Welcome(lang string) string {
	if text, ok := s.welcome[i18n.OrDefault(lang)]; ok {
		return text
	}
	return s.welcome[i18n.English]
}

// Summarize returns the conversation summarization prompt.
func (s *Set) Summarize() string { return s.summarize }

// Facts returns the facts extraction prompt ("key: value" lines or "none").
func (s *Set) Facts() string { return s.facts }

// Heartbeat returns the heartbeat prompt template, with ChecklistPlaceholder.
func (s *Set) Heartbeat() string { return s.heartbeat }

// HeartbeatPrompt returns the heartbeat prompt with the checklist filled in.
func (s *Set) HeartbeatPrompt(checklist string) string {
	return strings.Replace(s.heartbeat, ChecklistPlaceholder, strings.TrimSpace(checklist), 1)
}

// Sandbox returns the system prompt constraint for a sandbox mode (none,
// workspace, readonly); "" for a mode without one.
func (s *Set) Sandbox(mode string) string { return s.sandbox[mode] }

// parseSandbox reads one section per constrained mode ("## workspace",
// "## readonly"); the unconstrained mode "none" has none.
func parseSandbox(s *Set, text string) error {
	sections, err := splitSections(text)
	if err != nil {
		return err
	}
	for _, mode := range []string{"workspace", "readonly"} {
		if strings.TrimSpace(sections[mode]) == "" {
			return fmt.Errorf("missing or empty section ## %s", mode)
		}
	}
	s.sandbox = sections
	return nil
}

// Origin tells where a file's text came from: "default" or the override's
// path. Useful in start-up logs and /status.
func (s *Set) Origin(file string) string { return s.origins[file] }

var defaultSet = sync.OnceValue(func() *Set {
	set, err := load(func(name string) ([]byte, string, error) {
		b, err := defaults.ReadFile("defaults/" + name)
		return b, "default", err
	})
	if err != nil {
		// The defaults are compiled in and covered by tests: a failure here
		// is a programming error, not a runtime condition.
		panic(fmt.Sprintf("prompts: embedded defaults are invalid: %v", err))
	}
	return set
})

// Defaults returns the embedded prompts.
func Defaults() *Set { return defaultSet() }

// Load returns the prompts with each file taken from $dataDir/prompts/<FILE>
// when it exists, or from the embedded defaults otherwise. A malformed
// override is an error naming the file and the problem.
func Load(dataDir string) (*Set, error) {
	dir := filepath.Join(dataDir, "prompts")
	return load(func(name string) ([]byte, string, error) {
		path := filepath.Join(dir, name)
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			b, err = defaults.ReadFile("defaults/" + name)
			return b, "default", err
		}
		if err != nil {
			return nil, path, fmt.Errorf("read prompt override %s: %w", path, err)
		}
		return b, path, nil
	})
}

type readFunc func(name string) (data []byte, origin string, err error)

func load(read readFunc) (*Set, error) {
	set := &Set{origins: make(map[string]string)}
	steps := []struct {
		file  string
		parse func(*Set, string) error
	}{
		{SystemPromptFile, parseSystemPrompt},
		{WelcomeFile, parseWelcome},
		{HeartbeatFile, parseHeartbeat},
		{ClassifyFile, parseClassify},
		{SummarizeFile, func(s *Set, text string) error { return nonEmpty(&s.summarize, text) }},
		{FactsFile, func(s *Set, text string) error { return nonEmpty(&s.facts, text) }},
		{SandboxFile, parseSandbox},
	}
	for _, st := range steps {
		data, origin, err := read(st.file)
		if err != nil {
			return nil, err
		}
		if err := st.parse(set, string(data)); err != nil {
			return nil, fmt.Errorf("prompt file %s: %w", label(origin, st.file), err)
		}
		set.origins[st.file] = origin
	}
	set.forCaps = &resolvedSets{} // only now is the set whole
	return set, nil
}

// label names a file in errors: the override's path, or the embedded name.
func label(origin, file string) string {
	if origin == "default" {
		return "embedded " + file
	}
	return origin
}

func parseSystemPrompt(s *Set, text string) error {
	sections, err := splitSections(text)
	if err != nil {
		return err
	}
	var missing []string
	for _, name := range RequiredSections {
		if strings.TrimSpace(sections[name]) == "" {
			missing = append(missing, "## "+name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing or empty sections: %s", strings.Join(missing, ", "))
	}
	for name, text := range sections {
		if err := checkConditions(text); err != nil {
			return fmt.Errorf("section ## %s: %w", name, err)
		}
	}
	s.raw = sections
	s.sections = s.resolveFor(AllCapabilities()).sections
	return nil
}

func parseWelcome(s *Set, text string) error {
	sections, err := splitSections(text)
	if err != nil {
		return err
	}
	s.welcome = make(map[string]string, len(sections))
	for heading, body := range sections {
		lang, ok := i18n.Normalize(heading)
		if !ok {
			return fmt.Errorf("section ## %s is not a supported language (%s)", heading, strings.Join(i18n.Languages(), ", "))
		}
		if _, dup := s.welcome[lang]; dup {
			return fmt.Errorf("language %s appears twice", lang)
		}
		if strings.TrimSpace(body) == "" {
			return fmt.Errorf("section ## %s is empty", heading)
		}
		s.welcome[lang] = body
	}
	if _, ok := s.welcome[i18n.English]; !ok {
		return errors.New("missing section ## English (the fallback for every other language)")
	}
	return nil
}

func parseHeartbeat(s *Set, text string) error {
	if !strings.Contains(text, ChecklistPlaceholder) {
		// Without the placeholder the file is the user's checklist, which
		// the heartbeat imports into the log; the template stays the default.
		b, err := defaults.ReadFile("defaults/" + HeartbeatFile)
		if err != nil {
			return err
		}
		text = string(b)
	}
	if err := nonEmpty(&s.heartbeat, text); err != nil {
		return err
	}
	if !strings.Contains(s.heartbeat, ChecklistPlaceholder) {
		return fmt.Errorf("missing the %s placeholder: this file is the heartbeat prompt template, not the checklist itself", ChecklistPlaceholder)
	}
	if err := checkConditions(s.heartbeat); err != nil {
		return err
	}
	s.heartbeatRaw = s.heartbeat
	s.heartbeat, _ = resolve(s.heartbeatRaw, func(cond string) bool { return holds(cond, AllCapabilities()) })
	return nil
}

func parseClassify(s *Set, text string) error {
	if err := nonEmpty(&s.classify, text); err != nil {
		return err
	}
	if !strings.Contains(s.classify, ItemsPlaceholder) {
		return fmt.Errorf("missing the %s placeholder", ItemsPlaceholder)
	}
	return nil
}

// HeartbeatClassify returns the classification prompt for numbered items.
func (s *Set) HeartbeatClassify(numbered string) string {
	return strings.Replace(s.classify, ItemsPlaceholder, strings.TrimSpace(numbered), 1)
}

func nonEmpty(dst *string, text string) error {
	text = strings.TrimSpace(text)
	if text == "" {
		return errors.New("file is empty")
	}
	*dst = text
	return nil
}

// splitSections splits markdown on "## " headings. Text before the first
// heading (a title, comments) is ignored; a repeated heading is an error.
func splitSections(text string) (map[string]string, error) {
	sections := make(map[string]string)
	var name string
	var body []string
	flush := func() {
		if name != "" {
			sections[name] = strings.TrimSpace(strings.Join(body, "\n"))
		}
	}
	for _, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		heading, ok := strings.CutPrefix(line, "## ")
		if !ok {
			body = append(body, line)
			continue
		}
		flush()
		name, body = strings.TrimSpace(heading), nil
		if name == "" {
			return nil, errors.New("empty ## heading")
		}
		if _, dup := sections[name]; dup {
			return nil, fmt.Errorf("section ## %s appears twice", name)
		}
	}
	flush()
	return sections, nil
}

// WorkspaceClaudeFile is the template of the workspace's CLAUDE.md.
const WorkspaceClaudeFile = "WORKSPACE_CLAUDE.md"

// WorkspaceClaude is the embedded template omega deploys as the
// workspace's CLAUDE.md (its generated section is added to it). There is
// no override in $OMEGA_DATA_DIR/prompts: the deployed file is the
// person's to edit.
func WorkspaceClaude() string {
	b, err := defaults.ReadFile("defaults/" + WorkspaceClaudeFile)
	if err != nil {
		panic(fmt.Sprintf("prompts: embedded %s missing: %v", WorkspaceClaudeFile, err))
	}
	return string(b)
}
