package prompts

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
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
	// NoTools: the provider only writes text (the Anthropic and
	// OpenAI-compatible APIs); it cannot run commands, touch files or
	// browse, so the sandbox modes mean nothing to it. Negative so that a
	// turn recorded before providers differed reads as having had tools.
	NoTools bool
	// Channels are the names of the running channels (telegram,
	// whatsapp, terminal, http); the prompt names those people reach the
	// model through in place of ChannelsPlaceholder.
	Channels []string
}

// ChannelsPlaceholder is replaced by the running channels, as a phrase
// ("Telegram and an HTTP API"), in the system prompt sections.
const ChannelsPlaceholder = "{channels}"

// channelLabels names each channel in the prompt, in the order listed.
var channelLabels = []struct{ name, label string }{
	{"telegram", "Telegram"}, {"whatsapp", "WhatsApp"}, {"terminal", "a terminal"}, {"http", "an HTTP API"},
}

// channelPhrase lists the labels of the known channels c runs: "A", "A and
// B", "A, B and C"; "" when none.
func (c Capabilities) channelPhrase() string {
	var labels []string
	for _, l := range channelLabels {
		if slices.Contains(c.Channels, l.name) {
			labels = append(labels, l.label)
		}
	}
	if len(labels) < 2 {
		return strings.Join(labels, "")
	}
	return strings.Join(labels[:len(labels)-1], ", ") + " and " + labels[len(labels)-1]
}

// AllCapabilities is everything on (the prompt as written, conditions
// resolved), with the workspace sandbox and every channel.
func AllCapabilities() Capabilities {
	return Capabilities{Heartbeat: true, Scheduler: true, Images: true, Sandbox: "workspace", Skills: true, Projects: true, WhatsAppPairing: true,
		Channels: []string{"telegram", "whatsapp", "terminal", "http"}}
}

// conditions maps each condition word to the capability it tests. The
// sandbox words hold only with tools: a provider without any has no
// sandbox to be in.
var conditions = map[string]func(Capabilities) bool{
	"heartbeat":   func(c Capabilities) bool { return c.Heartbeat },
	"scheduler":   func(c Capabilities) bool { return c.Scheduler },
	"images":      func(c Capabilities) bool { return c.Images },
	"tools":       func(c Capabilities) bool { return !c.NoTools },
	"writes":      func(c Capabilities) bool { return !c.NoTools && c.Sandbox != "readonly" },
	"readonly":    func(c Capabilities) bool { return !c.NoTools && c.Sandbox == "readonly" },
	"unsandboxed": func(c Capabilities) bool { return !c.NoTools && c.Sandbox == "none" },
	"skills":      func(c Capabilities) bool { return c.Skills },
	"projects":    func(c Capabilities) bool { return c.Projects },
	"whatsapp":    func(c Capabilities) bool { return c.WhatsAppPairing },
	"channels":    func(c Capabilities) bool { return c.channelPhrase() != "" },
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
// the passages whose condition c meets, with the running channels named;
// the heartbeat template likewise, so a check-in asks only what the
// provider can do. Without tools there is no sandbox to describe.
func (s *Set) For(c Capabilities) *Set {
	if s.forCaps == nil {
		return s.resolveFor(c)
	}
	return s.forCaps.get(c, s.resolveFor)
}

// resolvedSets remembers the sets For made, by capabilities: every turn
// asks for the set of its capabilities, which seldom change, and
// resolving the sections anew each time was a tenth of what a turn
// allocated.
type resolvedSets struct {
	mu   sync.Mutex
	sets map[string]*Set
}

// maxResolvedSets bounds resolvedSets; capabilities vary in a few ways
// (skills and projects come and go), so it is only reached if they vary
// in many.
const maxResolvedSets = 64

func (r *resolvedSets) get(c Capabilities, resolve func(Capabilities) *Set) *Set {
	key := fmt.Sprintf("%#v", c)
	r.mu.Lock()
	defer r.mu.Unlock()
	if set, ok := r.sets[key]; ok {
		return set
	}
	if r.sets == nil || len(r.sets) >= maxResolvedSets {
		r.sets = map[string]*Set{}
	}
	set := resolve(c)
	r.sets[key] = set
	return set
}

func (s *Set) resolveFor(c Capabilities) *Set {
	out := *s
	out.sections = make(map[string]string, len(s.raw))
	channels := c.channelPhrase()
	for name, text := range s.raw {
		// The sections were checked when loaded: resolving cannot fail.
		resolved, _ := resolve(text, func(cond string) bool { return holds(cond, c) })
		out.sections[name] = strings.ReplaceAll(resolved, ChannelsPlaceholder, channels)
	}
	// Checked when loaded, like the sections.
	out.heartbeat, _ = resolve(s.heartbeatRaw, func(cond string) bool { return holds(cond, c) })
	if c.NoTools {
		out.sandbox = nil
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

// resolve keeps or drops each conditional passage of text. Passages may
// nest: one inside a dropped passage is dropped with it.
func resolve(text string, keep func(cond string) bool) (string, error) {
	var b strings.Builder
	var open []passage
	pos := 0
	for {
		t, err := nextTag(text, pos)
		if err != nil {
			return "", err
		}
		if !t.found {
			if len(open) > 0 {
				return "", fmt.Errorf("<!-- if %s --> without <!-- end -->", open[len(open)-1].cond)
			}
			b.WriteString(text[pos:])
			return tidy(b.String()), nil
		}
		if !t.open && len(open) == 0 {
			return "", errors.New("<!-- end --> without <!-- if ... -->")
		}
		from, to := lineSpan(text, t.start, t.end)
		if kept(open) {
			b.WriteString(text[pos:from])
		}
		if t.open {
			open = append(open, passage{cond: t.cond, keep: keep(t.cond)})
		} else {
			open = open[:len(open)-1]
		}
		pos = to
	}
}

// tag is an opening or closing tag found in a text.
type tag struct {
	found, open bool
	start, end  int
	cond        string
}

// nextTag finds the first tag at or after pos.
func nextTag(text string, pos int) (tag, error) {
	rest := text[pos:]
	io, ie := strings.Index(rest, ifOpen), strings.Index(rest, endTag)
	switch {
	case io < 0 && ie < 0:
		return tag{}, nil
	case io < 0 || (ie >= 0 && ie < io):
		return tag{found: true, start: pos + ie, end: pos + ie + len(endTag)}, nil
	}
	j := strings.Index(rest[io:], tagEnd)
	if j < 0 {
		return tag{}, errors.New("unterminated <!-- if ... tag")
	}
	return tag{found: true, open: true, start: pos + io, end: pos + io + j + len(tagEnd),
		cond: strings.TrimSpace(rest[io+len(ifOpen) : io+j])}, nil
}

// passage is an open conditional passage while resolving.
type passage struct {
	cond string
	keep bool
}

// kept says whether text inside the open passages is kept: all of them
// hold.
func kept(open []passage) bool {
	for _, p := range open {
		if !p.keep {
			return false
		}
	}
	return true
}

// lineSpan widens a tag's span to its whole line when the tag is alone on
// it, so that a dropped or kept passage leaves no blank line behind. A
// tag that follows text on its line (another tag's passage included)
// keeps the line break after it.
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
// "projects", "whatsapp", "no-tools", "channels:<name>,<name>".
func (c Capabilities) Names() []string {
	var out []string
	for _, f := range []struct {
		on   bool
		name string
	}{{c.Heartbeat, "heartbeat"}, {c.Scheduler, "scheduler"}, {c.Images, "images"}, {c.Sandbox != "", "sandbox:" + c.Sandbox},
		{c.Skills, "skills"}, {c.Projects, "projects"}, {c.WhatsAppPairing, "whatsapp"}, {c.NoTools, "no-tools"},
		{len(c.Channels) > 0, "channels:" + strings.Join(sorted(c.Channels), ",")}} {
		if f.on {
			out = append(out, f.name)
		}
	}
	return out
}

func sorted(names []string) []string {
	out := slices.Clone(names)
	slices.Sort(out)
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
		case n == "no-tools":
			c.NoTools = true
		case strings.HasPrefix(n, "channels:"):
			c.Channels = strings.Split(strings.TrimPrefix(n, "channels:"), ",")
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
	{"commands and writes", func(c Capabilities) bool { return !c.NoTools && c.Sandbox != "readonly" },
		[]string{"you can run commands", "write files", "fix the failing test"}},
	{"read-only", func(c Capabilities) bool { return !c.NoTools && c.Sandbox == "readonly" }, []string{"read and search files"}},
	{"actions with tools", func(c Capabilities) bool { return c.Scheduler && !c.NoTools && c.Sandbox != "readonly" }, []string{"full tool access"}},
	{"read-only actions", func(c Capabilities) bool { return c.Scheduler && !c.NoTools && c.Sandbox == "readonly" }, []string{"read-only\ntools"}},
	{"tools", func(c Capabilities) bool { return !c.NoTools }, []string{"browse the web", "with your tools", "look it up", "SELF_HEAL"}},
	{"no tools", func(c Capabilities) bool { return c.NoTools }, []string{"You have no tools", "say so plainly"}},
	{"model creates projects", func(c Capabilities) bool { return !c.NoTools && c.Sandbox == "none" }, []string{"create its folder"}},
	{"telegram", func(c Capabilities) bool { return slices.Contains(c.Channels, "telegram") }, []string{"Telegram"}},
	{"whatsapp channel", func(c Capabilities) bool { return slices.Contains(c.Channels, "whatsapp") || c.WhatsAppPairing }, []string{"WhatsApp"}},
	{"terminal", func(c Capabilities) bool { return slices.Contains(c.Channels, "terminal") }, []string{"a terminal"}},
	{"http", func(c Capabilities) bool { return slices.Contains(c.Channels, "http") }, []string{"an HTTP API"}},
	{"no project yet", func(c Capabilities) bool { return !c.Projects }, []string{"No project exists yet"}},
}
