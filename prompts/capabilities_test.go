package prompts

import (
	"fmt"
	"strings"
	"testing"
)

// Configurations are the capability sets the tests try.
var Configurations = map[string]Capabilities{
	"everything":              AllCapabilities(),
	"no heartbeat":            {Scheduler: true, Images: true, Sandbox: "workspace", Skills: true, Projects: true, WhatsAppPairing: true},
	"no scheduler":            {Heartbeat: true, Images: true, Sandbox: "workspace", Projects: true},
	"text only":               {Heartbeat: true, Scheduler: true, Sandbox: "workspace"},
	"read-only, no skills":    {Scheduler: true, Images: true, Sandbox: "readonly"},
	"unsandboxed, whatsapp":   {Heartbeat: true, Scheduler: true, Sandbox: "none", WhatsAppPairing: true},
	"nothing, read-only":      {Sandbox: "readonly"},
	"skills without anything": {Skills: true, Sandbox: "workspace"},
	"no tools, telegram":      {Heartbeat: true, Scheduler: true, Sandbox: "workspace", NoTools: true, Channels: []string{"telegram"}},
	"no tools, read-only":     {Scheduler: true, Sandbox: "readonly", NoTools: true, Channels: []string{"whatsapp", "http"}},
	"terminal only":           {Scheduler: true, Sandbox: "none", Channels: []string{"terminal"}},
}

// joined is every system prompt section of a set, as one text.
func joined(s *Set) string {
	var b strings.Builder
	for _, name := range RequiredSections {
		b.WriteString(s.Section(name) + "\n")
	}
	return b.String()
}

// Every capability a configuration has is described, and nothing it
// lacks is mentioned.
func TestPromptForCapabilities(t *testing.T) {
	for name, caps := range Configurations {
		t.Run(name, func(t *testing.T) {
			text := joined(Defaults().For(caps))
			for _, d := range Described {
				for _, p := range d.Phrases {
					has := strings.Contains(strings.ToLower(text), strings.ToLower(p))
					if d.On(caps) && !has {
						t.Errorf("%s is on but the prompt lacks %q", d.Name, p)
					}
					if !d.On(caps) && has {
						t.Errorf("%s is off but the prompt says %q", d.Name, p)
					}
				}
			}
			if strings.Contains(text, "<!--") || strings.Contains(text, "-->") || strings.Contains(text, "\n\n\n") {
				t.Errorf("unresolved tags or blank runs left:\n%s", text)
			}
			// What never depends on a capability stays.
			for _, always := range []string{"LIMITATION:", "PROJECT_ACTIVATE: <name>", "LANG_SWITCH:", "Be genuinely helpful"} {
				if !strings.Contains(text, always) {
					t.Errorf("lost %q", always)
				}
			}
		})
	}
	if Defaults().Section("Identity") != Defaults().For(AllCapabilities()).Section("Identity") {
		t.Error("the default set is not the prompt with every capability")
	}
}

func TestResolve(t *testing.T) {
	on := func(c string) bool { return c == "a" || c == "!b" }
	cases := []struct{ in, want string }{
		// A passage kept after another on the same line keeps its line break.
		{"one<!-- if a -->\ntwo.<!-- end --><!-- if a -->\nthree.<!-- end -->", "one\ntwo.\nthree."},
		{"x <!-- if a -->A<!-- end --> y", "x A y"},
		{"x <!-- if b -->B<!-- end --> y", "x  y"},
		{"x <!-- if !b -->not B<!-- end -->", "x not B"},
		{"- one\n<!-- if b -->\n- two\n<!-- end -->\n- three", "- one\n- three"},
		{"- one\n<!-- if a -->\n- two\n<!-- end -->\n- three", "- one\n- two\n- three"},
		{"p1\n\n<!-- if b -->\np2\n<!-- end -->\n\np3", "p1\n\np3"},
		// Passages nest: an inner one is kept only inside a kept outer one.
		{"<!-- if a -->\nA <!-- if !b -->notB<!-- end --><!-- if b -->B<!-- end -->\n<!-- end -->", "A notB"},
		{"<!-- if b -->\nB <!-- if a -->A<!-- end -->\n<!-- end -->x", "x"},
	}
	for _, c := range cases {
		if got, err := resolve(c.in, on); err != nil || got != c.want {
			t.Errorf("resolve(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"<!-- if a -->x", "x<!-- end -->", "<!-- if a --><!-- if b -->x<!-- end -->", "<!-- if a x"} {
		if _, err := resolve(bad, on); err == nil {
			t.Errorf("resolve(%q) accepted", bad)
		}
	}
	if err := checkConditions("<!-- if heartbeats -->x<!-- end -->"); err == nil || !strings.Contains(err.Error(), "heartbeats") {
		t.Errorf("unknown condition: %v", err)
	}
}

func TestOverrideWithUnknownCondition(t *testing.T) {
	dir := t.TempDir()
	writeOverride(t, dir, SystemPromptFile, strings.Replace(validSystem, "Meta.", "Meta.<!-- if telepathy -->x<!-- end -->", 1))
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "telepathy") {
		t.Fatalf("err = %v", err)
	}
}

// The check-in template asks for tools only of a provider that has them.
func TestHeartbeatPromptFollowsTools(t *testing.T) {
	with := Defaults().For(AllCapabilities()).HeartbeatPrompt("- check the backup")
	without := Defaults().For(Capabilities{Heartbeat: true, NoTools: true}).HeartbeatPrompt("- check the backup")
	if !strings.Contains(with, "with your tools") || Defaults().HeartbeatPrompt("x") != Defaults().For(AllCapabilities()).HeartbeatPrompt("x") {
		t.Errorf("with tools:\n%s", with)
	}
	for _, w := range []string{"tools", " run", "command", "<!--"} {
		if strings.Contains(without, w) {
			t.Errorf("without tools the check-in says %q:\n%s", w, without)
		}
	}
	if !strings.Contains(without, "judge each item") || !strings.Contains(without, "- check the backup") {
		t.Errorf("without tools:\n%s", without)
	}
}

// A set resolves each set of capabilities once and hands the same result
// to every turn that asks again; other capabilities get their own.
func TestForRemembersWhatItResolved(t *testing.T) {
	s := Defaults()
	skills := Capabilities{Heartbeat: true, Skills: true, Channels: []string{"telegram"}}
	noSkills := Capabilities{Heartbeat: true, Channels: []string{"telegram"}}
	otherChannel := Capabilities{Heartbeat: true, Skills: true, Channels: []string{"http"}}
	first := s.For(skills)
	if again := s.For(skills); again != first {
		t.Fatal("the same capabilities were resolved again")
	}
	for _, c := range []Capabilities{noSkills, otherChannel} {
		if s.For(c) == first {
			t.Fatalf("capabilities %+v got the set resolved for %+v", c, skills)
		}
	}
	if fmt.Sprint(s.For(noSkills).Sections()) == fmt.Sprint(first.Sections()) {
		t.Fatal("the prompt is the same with and without skills")
	}
	if fmt.Sprint(s.For(otherChannel).Sections()) == fmt.Sprint(first.Sections()) {
		t.Fatal("the prompt names the same channels for telegram and http")
	}
}
