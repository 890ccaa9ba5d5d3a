package promptctx

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/omega-gateway/omega/domain/turn"
)

// Prompt section names, as they appear as "## Name" in SYSTEM_PROMPT.md.
const (
	Identity   = "Identity"
	Soul       = "Soul"
	System     = "System"
	Scheduling = "Scheduling"
	Projects   = "Projects"
	Meta       = "Meta"
)

// Names of the data blocks reported in SectionsUsed, so a turn's timeline
// shows exactly what the model was given.
const (
	BlockPersonality       = "personality"
	BlockProjectAwareness  = "project_awareness"
	BlockProjectRole       = "project_role"
	BlockProjectBadge      = "project_badge"
	BlockHeartbeat         = "heartbeat_checklist"
	BlockPlatform          = "platform_hint"
	BlockGroupRules        = "group_rules"
	BlockProfile           = "profile"
	BlockTasks             = "tasks"
	BlockSummaries         = "summaries"
	BlockRecalled          = "recalled"
	BlockLessons           = "lessons"
	BlockOutcomes          = "outcomes"
	BlockSkills            = "skills"
	BlockSkillInstructions = "skill_instructions"
	BlockTime              = "time"
	BlockLanguage          = "language"
	BlockHistory           = "history"
	BlockSandbox           = "sandbox"
)

// Turn is one past message of the conversation.
type Turn struct {
	Role string // "user" or "assistant"
	Text string
	At   time.Time
}

// Task is one pending scheduled task of the sender.
type Task struct {
	ID          string
	Description string
	Due         time.Time
	Repeat      string // once, daily, weekly, monthly, weekdays
	Action      bool   // an autonomous action rather than a reminder
}

// Input is everything Build needs, already loaded by the caller.
type Input struct {
	// Prompts maps a section name (Identity, Soul, ...) to its text.
	Prompts map[string]string
	// Sandbox is the constraint text for the provider's sandbox mode;
	// empty when it may do anything.
	Sandbox string
	// FirstInSession is true when no provider session can be resumed; false
	// asks for a Continuation as well.
	FirstInSession bool
	Message        string
	SenderName     string
	Language       string // canonical name, e.g. "Spanish"; empty means English
	Personality    string
	ActiveProject  string
	ProjectRole    string   // the active project's ROLE.md, if any
	Projects       []string // names of available projects
	Heartbeat      string   // current heartbeat checklist, if any
	Now            time.Time
	Location       *time.Location // the user's zone; nil means UTC
	PlatformHint   string
	IsGroup        bool
	Facts          [][2]string
	History        []Turn
	Summaries      []string
	// Recalled are passages of older conversations found for the
	// message (shown when it asks to recall).
	Recalled []turn.RecalledPassage
	// NewConversation marks the first message of a new conversation: the
	// recent summaries are shown whatever the message says, so what was
	// said before the last one closed carries over.
	NewConversation bool
	Lessons         []string
	Outcomes        []string
	PendingTasks    []Task
	// Skills lists the available skills, one "name: description" each.
	Skills []string
	// MatchedSkills are the skills whose triggers the message matched:
	// their instructions (lessons included) join this turn's prompt.
	MatchedSkills []SkillText
}

// SkillText is a triggered skill's instructions.
type SkillText struct {
	Name, Instructions string
}

// Output is what the provider is given.
type Output struct {
	// System is the full system prompt. It is always built: providers
	// without sessions use it every time, and a failed resume falls back to it.
	System string
	// SectionsUsed names the sections and blocks in System, in order.
	SectionsUsed []string
	// Messages is the conversation for a full call: History then Message.
	Messages []Turn
	// Continuation is the whole prompt for a resumed session (empty when
	// FirstInSession): a short context update, the gated sections and the
	// message. The session already holds identity, soul, rules and history.
	Continuation string
	// ContinuationSections names what Continuation contains, in order.
	ContinuationSections []string
	// SystemPieces and ContinuationPieces are what System and
	// Continuation are made of: their concatenation is the text, each
	// section or block one piece, marked stable when it is the same from
	// turn to turn (prompt files, fixed rules), so that a context records
	// each sizeable piece once (turn.ContextBuilt.ByReference).
	SystemPieces, ContinuationPieces []turn.TextPiece
}

// stable are the sections and blocks that come from prompt files or fixed
// rules rather than from the turn.
var stable = map[string]bool{
	Identity: true, Soul: true, System: true, Scheduling: true, Projects: true, Meta: true,
	BlockSandbox: true, BlockPlatform: true, BlockGroupRules: true, BlockProjectRole: true,
}

// Group rules from the seed; SILENT is how the model declines to answer.
const groupRules = `Group chat rules:
- This is a group chat. Only respond when you are mentioned by name, asked a direct question, or can add genuine value.
- Never reveal personal facts learned in private conversations.
- If the message does not need a response from you, reply with exactly SILENT and nothing else.`

// Build assembles the prompts for one turn.
func Build(in Input) Output {
	gate := Gate(in.Message)
	lang := in.Language
	if lang == "" {
		lang = "English"
	}

	var full builder
	// The seed prepends the sandbox constraint to the system prompt.
	full.add(BlockSandbox, in.Sandbox)
	full.add(Identity, in.Prompts[Identity])
	full.add(Soul, in.Prompts[Soul])
	full.add(System, in.Prompts[System])
	if in.Personality != "" {
		full.add(BlockPersonality, "Personality preference from the user (follow it within your Soul's boundaries): "+in.Personality)
	}
	addProjectBlocks(&full, in)
	addGated(&full, in, gate)
	full.add(BlockPlatform, in.PlatformHint)
	if in.IsGroup {
		full.add(BlockGroupRules, groupRules)
	}
	// The seed loads the profile always: a question about the user needs
	// it whatever its words (the block is bounded, see MaxProfileFacts).
	full.add(BlockProfile, profileBlock(in))
	addData(&full, in, gate)
	full.add(BlockLessons, list("Learned behavioral rules:", in.Lessons))
	full.add(BlockSkills, skillsLine(in.Skills))
	full.add(BlockSkillInstructions, skillInstructions(in.MatchedSkills))
	full.add(BlockTime, timeLine(in))
	full.add(BlockLanguage, "IMPORTANT: Always respond in "+lang+".")

	out := Output{
		System:       full.String(),
		SystemPieces: full.pieces(),
		SectionsUsed: full.names,
		Messages:     messages(in),
	}
	if len(in.History) > 0 {
		out.SectionsUsed = append(out.SectionsUsed, BlockHistory)
	}
	if !in.FirstInSession {
		out.Continuation, out.ContinuationPieces, out.ContinuationSections = continuation(in, gate, lang)
	}
	return out
}

// continuation is the seed's minimal context update: the session already
// carries identity, soul, system rules, the profile and the history.
func continuation(in Input, gate Sections, lang string) (text string, pieces []turn.TextPiece, names []string) {
	var c builder
	c.add(BlockTime, timeLine(in))
	c.add(BlockLanguage, "Respond in "+lang+".")
	if in.Personality != "" {
		c.add(BlockPersonality, "Personality preference: "+in.Personality)
	}
	addProjectBlocks(&c, in)
	addGated(&c, in, gate)
	if in.IsGroup {
		// A group's session is shared by its members: the rules hold on
		// every turn, and the model is told who is talking this time.
		c.add(BlockGroupRules, groupRules)
		c.add(BlockProfile, profileBlock(in))
	} else if gate.Profile {
		// The session has the profile of its first turn; a message about
		// the user gets the current one.
		c.add(BlockProfile, profileBlock(in))
	}
	addData(&c, in, gate)
	c.add(BlockSkillInstructions, skillInstructions(in.MatchedSkills))
	pieces = append(append([]turn.TextPiece{{Text: "[Context update]\n"}}, c.pieces()...),
		turn.TextPiece{Text: "\n[End of context update]\n\n"}, turn.TextPiece{Text: in.Message})
	return "[Context update]\n" + c.String() + "\n[End of context update]\n\n" + in.Message, pieces, c.names
}

// addProjectBlocks adds the seed's "[Project: name]" badge, the projects
// known and the active one's ROLE.md: always, whatever the message says.
func addProjectBlocks(b *builder, in Input) {
	if in.ActiveProject != "" {
		b.add(BlockProjectBadge, "[Project: "+in.ActiveProject+"]")
	}
	if len(in.Projects) > 0 || in.ActiveProject != "" {
		b.add(BlockProjectAwareness, projectAwareness(in))
	}
	if in.ActiveProject != "" && strings.TrimSpace(in.ProjectRole) != "" {
		b.add(BlockProjectRole, "Active project \""+in.ActiveProject+"\" instructions:\n"+in.ProjectRole)
	}
}

func addGated(b *builder, in Input, gate Sections) {
	if gate.Scheduling {
		b.add(Scheduling, in.Prompts[Scheduling])
	}
	if gate.Projects {
		b.add(Projects, in.Prompts[Projects])
	}
	if gate.Meta {
		b.add(Meta, in.Prompts[Meta])
		if strings.TrimSpace(in.Heartbeat) != "" {
			b.add(BlockHeartbeat, "Current heartbeat checklist:\n"+strings.TrimSpace(in.Heartbeat))
		}
	}
}

func addData(b *builder, in Input, gate Sections) {
	if gate.Tasks {
		b.add(BlockTasks, tasksBlock(in))
	}
	if gate.Recall || in.NewConversation {
		b.add(BlockSummaries, list("Recent conversation summaries:", in.Summaries))
	}
	if gate.Recall {
		b.add(BlockRecalled, recalledBlock(in.Recalled, in.Location))
	}
	if gate.Outcomes {
		b.add(BlockOutcomes, list("Recent outcomes:", in.Outcomes))
	}
}

// Bounds of the profile block, which every full prompt carries: at most
// MaxProfileFacts facts, and the whole block at most MaxProfileBytes.
// Facts past a bound are left out and counted in a last line.
const (
	MaxProfileFacts = 40
	MaxProfileBytes = 4 << 10
)

const profileHeader = "User profile:"

// firstFacts come before the others (alphabetical): replies and
// schedules depend on them.
var firstFacts = []string{"preferred_language", "timezone"}

// profileBlock is what the model knows about who is talking. In a group it
// is only their name: the group's session and history are shared by its
// members, and one member's facts must not reach another.
func profileBlock(in Input) string {
	if in.IsGroup {
		if in.SenderName == "" {
			return ""
		}
		return "This message is from " + in.SenderName + ", a member of this group chat."
	}
	var lines []string
	// size counts the block as it would be written with every line so
	// far and the omitted line, so the block never outgrows its bound.
	size, shown, omitted := len(profileHeader)+1+len(omittedLine(len(in.Facts))), 0, 0
	if in.SenderName != "" {
		lines = append(lines, "- name: "+in.SenderName)
		size += 1 + len(lines[0])
	}
	for _, f := range orderFacts(in.Facts) {
		if f[0] == "name" && in.SenderName != "" {
			continue
		}
		line := "- " + f[0] + ": " + f[1]
		if shown == MaxProfileFacts || size+1+len(line) > MaxProfileBytes {
			omitted++
			continue
		}
		lines, size, shown = append(lines, line), size+1+len(line), shown+1
	}
	if len(lines) == 0 {
		return ""
	}
	if omitted > 0 {
		lines = append(lines, omittedLine(omitted))
	}
	return profileHeader + "\n" + strings.Join(lines, "\n")
}

// omittedLine counts the facts a bounded profile leaves out.
func omittedLine(n int) string { return fmt.Sprintf("(%d more facts not shown)", n) }

func orderFacts(facts [][2]string) [][2]string {
	out := make([][2]string, 0, len(facts))
	for _, k := range firstFacts {
		for _, f := range facts {
			if f[0] == k {
				out = append(out, f)
			}
		}
	}
	for _, f := range facts {
		if !slices.Contains(firstFacts, f[0]) {
			out = append(out, f)
		}
	}
	return out
}

// tasksBlock is emitted even when empty: "no tasks" is information the
// model needs before it creates one.
func tasksBlock(in Input) string {
	if len(in.PendingTasks) == 0 {
		return "User's scheduled tasks: none."
	}
	loc := location(in)
	var b strings.Builder
	b.WriteString("User's scheduled tasks:")
	for _, t := range in.PendingTasks {
		kind := ""
		if t.Action {
			kind = " [action]"
		}
		repeat := t.Repeat
		if repeat == "" {
			repeat = "once"
		}
		fmt.Fprintf(&b, "\n- [%s] %s%s (due: %s, %s)", shortID(t.ID), t.Description, kind,
			t.Due.In(loc).Format("2006-01-02 15:04 MST"), repeat)
	}
	return b.String()
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

func projectAwareness(in Input) string {
	var b strings.Builder
	if len(in.Projects) > 0 {
		b.WriteString("Available projects: " + strings.Join(in.Projects, ", ") + ".")
	} else {
		b.WriteString("No projects yet.")
	}
	if in.ActiveProject != "" {
		b.WriteString(" Active project: " + in.ActiveProject + ".")
	} else {
		b.WriteString(" No project is active.")
	}
	b.WriteString(" Switch with PROJECT_ACTIVATE: <name> or PROJECT_DEACTIVATE.")
	return b.String()
}

// skillsLine names the skills, only when there are any.
func skillsLine(skills []string) string {
	return list("Available skills (a skill's instructions are added when a message mentions one of its trigger words; record what you learn about one with SKILL_IMPROVE: skill | lesson):", skills)
}

func skillInstructions(skills []SkillText) string {
	var parts []string
	for _, s := range skills {
		if t := strings.TrimSpace(s.Instructions); t != "" {
			parts = append(parts, "Skill \""+s.Name+"\" instructions (this message triggered it):\n"+t)
		}
	}
	return strings.Join(parts, "\n\n")
}

func timeLine(in Input) string {
	now := in.Now
	if now.IsZero() {
		return ""
	}
	local := now.In(location(in))
	return fmt.Sprintf("Current time: %s (%s, UTC%s)", local.Format("Monday 2006-01-02 15:04 MST"),
		location(in).String(), local.Format("-07:00"))
}

func location(in Input) *time.Location {
	if in.Location == nil {
		return time.UTC
	}
	return in.Location
}

func list(title string, items []string) string {
	var b strings.Builder
	for _, it := range items {
		if it = strings.TrimSpace(it); it != "" {
			b.WriteString("\n- " + it)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return title + b.String()
}

func messages(in Input) []Turn {
	msgs := make([]Turn, 0, len(in.History)+1)
	msgs = append(msgs, in.History...)
	return append(msgs, Turn{Role: "user", Text: in.Message, At: in.Now})
}

// builder joins non-empty parts with blank lines and remembers their names.
type builder struct {
	parts []string
	names []string
}

func (b *builder) add(name, text string) {
	text = strings.TrimSpace(text)
	if text == "" {
		return
	}
	b.parts = append(b.parts, text)
	b.names = append(b.names, name)
}

func (b *builder) String() string { return strings.Join(b.parts, "\n\n") }

// pieces are the parts with the separators between them: their
// concatenation is String().
func (b *builder) pieces() []turn.TextPiece {
	out := make([]turn.TextPiece, 0, 2*len(b.parts))
	for i, p := range b.parts {
		if i > 0 {
			out = append(out, turn.TextPiece{Text: "\n\n"})
		}
		out = append(out, turn.TextPiece{Text: p, Stable: stable[b.names[i]]})
	}
	return out
}
