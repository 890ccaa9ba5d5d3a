package prompts

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Capabilities is what this process actually does. The prompt files may
// hold conditional passages,
//
//	<!-- if heartbeat -->...<!-- end -->    kept when the heartbeat runs
//	<!-- if !images -->...<!-- end -->      kept when no channel delivers images
//
// and Set.For keeps only those whose condition holds, so the model is
// never told about a capability that is off or absent. A passage may sit
// inside a line or take whole lines (the tag lines then vanish).
type Capabilities struct {
	// Heartbeat: periodic check-ins run (OMEGA_HEARTBEAT_ENABLED).
	Heartbeat bool
	// Scheduler: reminders and action tasks fire at their due time.
	Scheduler bool
	// Images: a running channel delivers the images people send, which
	// reach the model as "[Attached image: path]", and shows the images
	// the model makes in its workspace, sent after its reply.
	Images bool
	// Sandbox is the provider's sandbox mode (none, workspace, readonly).
	Sandbox string
	// Skills: at least one skill (a folder with SKILL.md) is installed.
	Skills bool
	// Projects: at least one project is defined.
	Projects bool
	// WhatsAppPairing: WHATSAPP_QR can pair WhatsApp (WhatsApp is enabled).
	WhatsAppPairing bool
}

// AllCapabilities is everything on (the prompt as written, conditions
// resolved), with the workspace sandbox.
func AllCapabilities() Capabilities {
	return Capabilities{Heartbeat: true, Scheduler: true, Images: true, Sandbox: "workspace", Skills: true, Projects: true, WhatsAppPairing: true}
}

// conditions maps each condition word to the capability it tests.
var conditions = map[string]func(Capabilities) bool{
	"heartbeat":   func(c Capabilities) bool { return c.Heartbeat },
	"scheduler":   func(c Capabilities) bool { return c.Scheduler },
	"images":      func(c Capabilities) bool { return c.Images },
	"readonly":    func(c Capabilities) bool { return c.Sandbox == "readonly" },
	"unsandboxed": func(c Capabilities) bool { return c.Sandbox == "none" },
	"skills":      func(c Capabilities) bool { return c.Skills },
	"projects":    func(c Capabilities) bool { return c.Projects },
	"whatsapp":    func(c Capabilities) bool { return c.WhatsAppPairing },
}

// Conditions lists the condition words the prompt files may use.
func Conditions() []string {
	out := make([]string, 0, len(conditions))
	for k := range conditions {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// For returns a copy of the set whose system prompt sections keep only
// the passages whose condition c meets.
func (s *Set) For(c Capabilities) *Set {
	out := *s
	out.sections = make(map[string]string, len(s.raw))
	for name, text := range s.raw {
		// The sections were checked when loaded: resolving cannot fail.
		resolved, _ := resolve(text, func(cond string) bool { return holds(cond, c) })
		out.sections[name] = resolved
	}
	return &out
}

func holds(cond string, c Capabilities) bool {
	neg := strings.HasPrefix(cond, "!")
	test := conditions[strings.TrimPrefix(cond, "!")]
	return test != nil && test(c) != neg
}

const (
	ifOpen = "<!-- if "
	tagEnd = "-->"
	endTag = "<!-- end -->"
)

// checkConditions reports malformed or unknown conditions in a text.
func checkConditions(text string) error {
	var bad error
	_, err := resolve(text, func(cond string) bool {
		if _, ok := conditions[strings.TrimPrefix(cond, "!")]; !ok && bad == nil {
			bad = fmt.Errorf("unknown condition %q (known: %s)", cond, strings.Join(Conditions(), ", "))
		}
		return true
	})
	if err != nil {
		return err
	}
	return bad
}

// resolve keeps or drops each conditional passage of text.
func resolve(text string, keep func(cond string) bool) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(text, ifOpen)
		if i < 0 {
			if strings.Contains(text, endTag) {
				return "", errors.New("<!-- end --> without <!-- if ... -->")
			}
			b.WriteString(text)
			return tidy(b.String()), nil
		}
		j := strings.Index(text[i:], tagEnd)
		if j < 0 {
			return "", errors.New("unterminated <!-- if ... tag")
		}
		cond := strings.TrimSpace(text[i+len(ifOpen) : i+j])
		openEnd := i + j + len(tagEnd)
		k := strings.Index(text[openEnd:], endTag)
		if k < 0 {
			return "", fmt.Errorf("<!-- if %s --> without <!-- end -->", cond)
		}
		inner := text[openEnd : openEnd+k]
		if strings.Contains(inner, ifOpen) {
			return "", fmt.Errorf("<!-- if %s --> holds another condition (they do not nest)", cond)
		}
		closeStart, closeEnd := openEnd+k, openEnd+k+len(endTag)
		oStart, oEnd := lineSpan(text, i, openEnd)
		cStart, cEnd := lineSpan(text, closeStart, closeEnd)
		b.WriteString(text[:oStart])
		if keep(cond) {
			b.WriteString(text[oEnd:cStart])
		}
		text = text[cEnd:]
	}
}

// lineSpan widens a tag's span to its whole line when the tag is alone on
// it, so that a dropped or kept passage leaves no blank line behind.
func lineSpan(text string, start, end int) (int, int) {
	ls := strings.LastIndexByte(text[:start], '\n') + 1
	if strings.TrimSpace(text[ls:start]) != "" {
		return start, end
	}
	le := strings.IndexByte(text[end:], '\n')
	if le < 0 {
		le = len(text) - end
	} else {
		le++
	}
	if strings.TrimSpace(text[end:end+le]) != "" {
		return start, end
	}
	return ls, end + le
}

// tidy collapses the blank lines a dropped passage may leave.
func tidy(s string) string {
	for strings.Contains(s, "\n\n\n") {
		s = strings.ReplaceAll(s, "\n\n\n", "\n\n")
	}
	return strings.TrimSpace(s)
}

// Names lists the capabilities that are on, as a turn records them:
// "heartbeat", "scheduler", "images", "sandbox:<mode>", "skills",
// "projects", "whatsapp".
func (c Capabilities) Names() []string {
	var out []string
	for _, f := range []struct {
		on   bool
		name string
	}{{c.Heartbeat, "heartbeat"}, {c.Scheduler, "scheduler"}, {c.Images, "images"}, {c.Sandbox != "", "sandbox:" + c.Sandbox},
		{c.Skills, "skills"}, {c.Projects, "projects"}, {c.WhatsAppPairing, "whatsapp"}} {
		if f.on {
			out = append(out, f.name)
		}
	}
	return out
}

// ParseCapabilities reads what Names wrote; unknown names are ignored.
func ParseCapabilities(names []string) Capabilities {
	var c Capabilities
	for _, n := range names {
		switch {
		case n == "heartbeat":
			c.Heartbeat = true
		case n == "scheduler":
			c.Scheduler = true
		case n == "images":
			c.Images = true
		case strings.HasPrefix(n, "sandbox:"):
			c.Sandbox = strings.TrimPrefix(n, "sandbox:")
		case n == "skills":
			c.Skills = true
		case n == "projects":
			c.Projects = true
		case n == "whatsapp":
			c.WhatsAppPairing = true
		}
	}
	return c
}

// Described lists, for each capability the default prompt describes,
// whether a configuration has it and phrases (matched case-insensitively)
// that appear in the system prompt exactly when it does. The tests check
// built prompts against it, here and end to end in app/.
var Described = []struct {
	Name    string
	On      func(Capabilities) bool
	Phrases []string
}{
	{"heartbeat", func(c Capabilities) bool { return c.Heartbeat }, []string{"HEARTBEAT_ADD", "HEARTBEAT_OK", "heartbeat"}},
	{"scheduler", func(c Capabilities) bool { return c.Scheduler },
		[]string{"SCHEDULE:", "SCHEDULE_ACTION:", "CANCEL_TASK", "scheduler", "Remind me"}},
	{"images", func(c Capabilities) bool { return c.Images }, []string{"[Attached image", "Images the user sends", "Images you create or change"}},
	{"skills", func(c Capabilities) bool { return c.Skills }, []string{"SKILL_IMPROVE", "skill"}},
	{"whatsapp", func(c Capabilities) bool { return c.WhatsAppPairing }, []string{"WHATSAPP_QR", "QR code"}},
	{"commands and writes", func(c Capabilities) bool { return c.Sandbox != "readonly" }, []string{"run commands", "write files", "fix the failing test"}},
	{"read-only", func(c Capabilities) bool { return c.Sandbox == "readonly" }, []string{"read and search files"}},
	{"model creates projects", func(c Capabilities) bool { return c.Sandbox == "none" }, []string{"create its folder"}},
	{"no project yet", func(c Capabilities) bool { return !c.Projects }, []string{"No project exists yet"}},
}
