package domain

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Streams of the agent's self-knowledge, written by markers.
func HeartbeatStream(scope string) string { return "heartbeat-" + scope }
func LearningStream(sender string) string { return "learning-" + sender }
func SkillStream(name string) string      { return "skill-" + SkillKey(name) }

const (
	SelfHealStream    = "selfheal"
	LimitationsStream = "limitations"
	BugReportsStream  = "bugreports"
	// GlobalHeartbeat is the scope of the checklist outside any project.
	GlobalHeartbeat = "global"
)

// Heartbeat checklist events.
type (
	HeartbeatItemAdded struct {
		Item string `json:"item"`
	}
	HeartbeatItemRemoved struct {
		Keyword string   `json:"keyword"`
		Removed []string `json:"removed"`
	}
	HeartbeatIntervalSet struct {
		Minutes int `json:"minutes"`
		// By is who set it (IntervalByAgent, IntervalByCLI); empty in
		// events recorded before it was kept.
		By string `json:"by,omitempty"`
	}
	HeartbeatSectionSuppressed struct {
		Section string `json:"section"`
	}
	HeartbeatSectionUnsuppressed struct {
		Section string `json:"section"`
	}
	// HeartbeatFileImported records that a HEARTBEAT.md was imported (its
	// items follow as HeartbeatItemAdded), so an unchanged file is not
	// imported again.
	HeartbeatFileImported struct {
		Path string `json:"path"`
		Hash string `json:"hash"`
	}
)

// Self-healing, limitation, bug report, learning and skill events.
type (
	SelfHealStarted struct {
		Description  string `json:"description"`
		Verification string `json:"verification,omitempty"`
	}
	SelfHealIterated struct {
		Iteration    int    `json:"iteration"`
		Description  string `json:"description"`
		Verification string `json:"verification,omitempty"`
	}
	// SelfHealEscalated: the iteration limit was reached; the owner must act.
	SelfHealEscalated struct {
		Iterations  int    `json:"iterations"`
		Description string `json:"description"`
	}
	SelfHealResolved struct {
		Iterations int `json:"iterations"`
	}
	// SelfHealFollowUpStarted claims an iteration's follow-up call.
	SelfHealFollowUpStarted struct {
		Effort    int64  `json:"effort"`
		Iteration int    `json:"iteration"`
		Prompt    string `json:"prompt"`
	}
	// SelfHealFollowUpReplied records the reply before its markers are
	// applied; Error is set when the call failed.
	SelfHealFollowUpReplied struct {
		Effort    int64      `json:"effort"`
		Iteration int        `json:"iteration"`
		Raw       string     `json:"raw,omitempty"`
		Error     string     `json:"error,omitempty"`
		Usage     *CallUsage `json:"usage,omitempty"`
	}
	SelfHealFollowUpDone struct {
		Effort    int64           `json:"effort"`
		Iteration int             `json:"iteration"`
		Markers   []AppliedMarker `json:"markers,omitempty"`
	}
	// SelfHealOwnerNotified: the escalation was sent to the owner (or
	// could not be: Error).
	SelfHealOwnerNotified struct {
		Text  string `json:"text"`
		Error string `json:"error,omitempty"`
	}
	LimitationReported struct {
		Title       string `json:"title"`
		Description string `json:"description"`
		Plan        string `json:"plan,omitempty"`
	}
	BugReported struct {
		Description string `json:"description"`
		Sender      string `json:"sender,omitempty"`
	}
	ActionOutcomeRecorded struct {
		Outcome string `json:"outcome"`
		Project string `json:"project,omitempty"`
	}
	RewardRecorded struct {
		Score   int    `json:"score"`
		Domain  string `json:"domain"`
		Lesson  string `json:"lesson"`
		Project string `json:"project,omitempty"`
		// Source is "heartbeat" for a check-in's marker; empty for a turn.
		Source string `json:"source,omitempty"`
	}
	LessonLearned struct {
		Domain  string `json:"domain"`
		Rule    string `json:"rule"`
		Project string `json:"project,omitempty"`
		Source  string `json:"source,omitempty"`
	}
	SkillLessonRecorded struct {
		Skill  string `json:"skill"`
		Lesson string `json:"lesson"`
	}
)

func (HeartbeatItemAdded) EventType() string           { return "HeartbeatItemAdded" }
func (HeartbeatItemRemoved) EventType() string         { return "HeartbeatItemRemoved" }
func (HeartbeatIntervalSet) EventType() string         { return "HeartbeatIntervalSet" }
func (HeartbeatSectionSuppressed) EventType() string   { return "HeartbeatSectionSuppressed" }
func (HeartbeatSectionUnsuppressed) EventType() string { return "HeartbeatSectionUnsuppressed" }
func (HeartbeatFileImported) EventType() string        { return "HeartbeatFileImported" }
func (SelfHealStarted) EventType() string              { return "SelfHealStarted" }
func (SelfHealIterated) EventType() string             { return "SelfHealIterated" }
func (SelfHealEscalated) EventType() string            { return "SelfHealEscalated" }
func (SelfHealResolved) EventType() string             { return "SelfHealResolved" }
func (SelfHealFollowUpStarted) EventType() string      { return "SelfHealFollowUpStarted" }
func (SelfHealFollowUpReplied) EventType() string      { return "SelfHealFollowUpReplied" }
func (SelfHealFollowUpDone) EventType() string         { return "SelfHealFollowUpDone" }
func (SelfHealOwnerNotified) EventType() string        { return "SelfHealOwnerNotified" }
func (LimitationReported) EventType() string           { return "LimitationReported" }
func (BugReported) EventType() string                  { return "BugReported" }
func (ActionOutcomeRecorded) EventType() string        { return "ActionOutcomeRecorded" }
func (RewardRecorded) EventType() string               { return "RewardRecorded" }
func (LessonLearned) EventType() string                { return "LessonLearned" }
func (SkillLessonRecorded) EventType() string          { return "SkillLessonRecorded" }

// RegisterAgentEvents adds the heartbeat, self-heal, learning, limitation,
// bug report and skill events to a registry.
func RegisterAgentEvents(r *Registry) {
	for _, p := range []Payload{HeartbeatItemAdded{}, HeartbeatItemRemoved{}, HeartbeatIntervalSet{},
		HeartbeatSectionSuppressed{}, HeartbeatSectionUnsuppressed{}, HeartbeatFileImported{}, SelfHealStarted{}, SelfHealIterated{},
		SelfHealEscalated{}, SelfHealResolved{}, SelfHealFollowUpStarted{}, SelfHealFollowUpReplied{},
		SelfHealFollowUpDone{}, SelfHealOwnerNotified{}, LimitationReported{}, BugReported{}, ActionOutcomeRecorded{},
		RewardRecorded{}, LessonLearned{}, SkillLessonRecorded{}, OwnerAlerted{}} {
		r.Register(p, 1)
	}
}

// ErrHeartbeatInterval rejects intervals outside 1..1440 minutes.
var ErrHeartbeatInterval = errors.New("heartbeat interval must be 1 to 1440 minutes")

// Heartbeat is the checklist of one scope.
type Heartbeat struct {
	Version    int64
	Items      []string
	Interval   int // minutes; 0 means the configured default
	IntervalBy string
	Suppressed []string
	// Imported maps an imported file's path to its content hash.
	Imported map[string]string
}

func (h *Heartbeat) Apply(p Payload, version int64, _ time.Time) {
	h.Version = version
	switch e := p.(type) {
	case HeartbeatItemAdded:
		h.Items = append(h.Items, e.Item)
	case HeartbeatItemRemoved:
		h.Items = slices.DeleteFunc(h.Items, func(s string) bool { return slices.Contains(e.Removed, s) })
	case HeartbeatIntervalSet:
		h.Interval, h.IntervalBy = e.Minutes, e.By
	case HeartbeatSectionSuppressed:
		h.Suppressed = append(h.Suppressed, e.Section)
	case HeartbeatSectionUnsuppressed:
		h.Suppressed = slices.DeleteFunc(h.Suppressed, func(s string) bool { return strings.EqualFold(s, e.Section) })
	case HeartbeatFileImported:
		if h.Imported == nil {
			h.Imported = map[string]string{}
		}
		h.Imported[e.Path] = e.Hash
	}
}

// Add decides adding an item; none when an equal item (any case) exists.
func (h Heartbeat) Add(item string) []Payload {
	item = strings.TrimSpace(item)
	if item == "" || slices.ContainsFunc(h.Items, func(s string) bool { return strings.EqualFold(s, item) }) {
		return nil
	}
	return []Payload{HeartbeatItemAdded{Item: item}}
}

// Import decides adding a file's items (see ParseHeartbeatFile): none when
// the same content was imported from path before; items already on the
// list (any case) are skipped.
func (h Heartbeat) Import(path, hash string, items []string) []Payload {
	if h.Imported[path] == hash {
		return nil
	}
	var out []Payload
	for _, it := range items {
		next := h
		next.Items = slices.Clone(h.Items)
		for _, p := range out {
			next.Items = append(next.Items, p.(HeartbeatItemAdded).Item)
		}
		out = append(out, next.Add(it)...)
	}
	return append(out, HeartbeatFileImported{Path: path, Hash: hash})
}

// ParseHeartbeatFile reads a HEARTBEAT.md: "## " headers and list items
// ("- ", "* " or plain lines) are items; blank lines and "# " titles are
// not.
func ParseHeartbeatFile(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		l := strings.TrimSpace(line)
		switch {
		case l == "", strings.HasPrefix(l, "# "), l == "#":
			continue
		case strings.HasPrefix(l, "## "):
			out = append(out, l)
		default:
			l = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(l, "- "), "* "))
			if l != "" {
				out = append(out, l)
			}
		}
	}
	return out
}

// Export writes the checklist as a HEARTBEAT.md.
func (h Heartbeat) Export() string {
	var b strings.Builder
	for _, it := range h.Items {
		if HeartbeatSectionName(it) != "" {
			b.WriteString("\n" + it + "\n")
			continue
		}
		b.WriteString("- " + it + "\n")
	}
	return strings.TrimLeft(b.String(), "\n")
}

// Remove decides removing every item containing keyword, any case.
func (h Heartbeat) Remove(keyword string) []Payload {
	k := strings.ToLower(strings.TrimSpace(keyword))
	if k == "" {
		return nil
	}
	var removed []string
	for _, s := range h.Items {
		if strings.Contains(strings.ToLower(s), k) {
			removed = append(removed, s)
		}
	}
	if len(removed) == 0 {
		return nil
	}
	return []Payload{HeartbeatItemRemoved{Keyword: keyword, Removed: removed}}
}

// Who set a heartbeat interval (HeartbeatIntervalSet.By).
const (
	IntervalByAgent = "agent" // a HEARTBEAT_INTERVAL marker in a reply
	IntervalByCLI   = "cli"   // omega heartbeat interval
)

// SetInterval decides a new interval, set by by.
func (h Heartbeat) SetInterval(minutes int, by string) ([]Payload, error) {
	if minutes < 1 || minutes > 1440 {
		return nil, fmt.Errorf("%w: %d", ErrHeartbeatInterval, minutes)
	}
	if minutes == h.Interval {
		return nil, nil
	}
	return []Payload{HeartbeatIntervalSet{Minutes: minutes, By: by}}, nil
}

// Suppress decides hiding a section from heartbeat reports.
func (h Heartbeat) Suppress(section string) []Payload {
	section = strings.TrimSpace(section)
	if section == "" || h.suppressed(section) {
		return nil
	}
	return []Payload{HeartbeatSectionSuppressed{Section: section}}
}

// Unsuppress decides showing a section again.
func (h Heartbeat) Unsuppress(section string) []Payload {
	section = strings.TrimSpace(section)
	if !h.suppressed(section) {
		return nil
	}
	return []Payload{HeartbeatSectionUnsuppressed{Section: section}}
}

func (h Heartbeat) suppressed(section string) bool {
	return slices.ContainsFunc(h.Suppressed, func(s string) bool { return strings.EqualFold(s, section) })
}

// MaxSelfHealIterations bounds self-healing: after this many attempts the
// owner is alerted instead of trying again.
const MaxSelfHealIterations = 10

// SelfHeal is the state of the single self-healing effort.
type SelfHeal struct {
	Version      int64
	Active       bool
	Escalated    bool
	Iteration    int
	Description  string
	Verification string
	// Effort is the version of the SelfHealStarted that opened the effort:
	// it keys the follow-ups of one effort apart from the next one's.
	Effort int64
	// Changed is when the effort last started or iterated; a follow-up
	// falls due a delay after it.
	Changed time.Time
	// Attempts are the descriptions of each iteration, in order.
	Attempts []string
	// FollowUp is the follow-up of the current iteration, if started.
	FollowUp *SelfHealFollowUp
	// Notified: the owner was told of the escalation.
	Notified bool
}

// SelfHealFollowUp is the progress of one iteration's follow-up call.
type SelfHealFollowUp struct {
	Iteration int
	Replied   bool
	Raw       string
	Done      bool
}

func (s *SelfHeal) Apply(p Payload, version int64, at time.Time) {
	s.Version = version
	switch e := p.(type) {
	case SelfHealStarted:
		*s = SelfHeal{Version: version, Active: true, Iteration: 1, Description: e.Description,
			Verification: e.Verification, Effort: version, Changed: at, Attempts: []string{e.Description}}
	case SelfHealIterated:
		s.Iteration, s.Description, s.Changed = e.Iteration, e.Description, at
		s.Verification = cmp.Or(e.Verification, s.Verification)
		s.Attempts = append(s.Attempts, e.Description)
	case SelfHealEscalated:
		s.Escalated = true
	case SelfHealResolved:
		*s = SelfHeal{Version: version}
	case SelfHealFollowUpStarted:
		if e.Effort == s.Effort {
			s.FollowUp = &SelfHealFollowUp{Iteration: e.Iteration}
		}
	case SelfHealFollowUpReplied:
		if f := s.followUpOf(e.Effort, e.Iteration); f != nil {
			f.Replied, f.Raw = true, e.Raw
		}
	case SelfHealFollowUpDone:
		if f := s.followUpOf(e.Effort, e.Iteration); f != nil {
			f.Done = true
		}
	case SelfHealOwnerNotified:
		s.Notified = true
	}
}

// followUpOf returns the follow-up in progress if it is the one of that
// effort's iteration, else nil: a late event of an earlier effort or
// iteration changes nothing.
func (s *SelfHeal) followUpOf(effort int64, iteration int) *SelfHealFollowUp {
	if f := s.FollowUp; f != nil && effort == s.Effort && f.Iteration == iteration {
		return f
	}
	return nil
}

// FollowUpDue says whether the current iteration still needs its
// follow-up and when it falls due.
func (s SelfHeal) FollowUpDue(delay time.Duration) (time.Time, bool) {
	if !s.Active || s.Escalated || (s.FollowUp != nil && s.FollowUp.Iteration == s.Iteration) {
		return time.Time{}, false
	}
	return s.Changed.Add(delay), true
}

// Heal decides the next self-healing step: start, iterate, or escalate
// once the limit is reached (and nothing more after that).
func (s SelfHeal) Heal(description, verification string) []Payload {
	description = strings.TrimSpace(description)
	switch {
	case description == "":
		return nil
	case !s.Active:
		return []Payload{SelfHealStarted{Description: description, Verification: verification}}
	case s.Escalated:
		return nil
	case s.Iteration >= MaxSelfHealIterations:
		return []Payload{SelfHealEscalated{Iterations: s.Iteration, Description: description}}
	}
	return []Payload{SelfHealIterated{Iteration: s.Iteration + 1, Description: description, Verification: verification}}
}

// Resolve decides ending the self-healing effort.
func (s SelfHeal) Resolve() []Payload {
	if !s.Active {
		return nil
	}
	return []Payload{SelfHealResolved{Iterations: s.Iteration}}
}

// Limitations is the set of reported limitations, by lower-cased title.
type Limitations struct {
	Version int64
	Titles  map[string]bool
}

func (l *Limitations) Apply(p Payload, version int64, _ time.Time) {
	l.Version = version
	if e, ok := p.(LimitationReported); ok {
		if l.Titles == nil {
			l.Titles = map[string]bool{}
		}
		l.Titles[strings.ToLower(e.Title)] = true
	}
}

// Report decides recording a limitation; none if the title is known.
func (l Limitations) Report(title, description, plan string) []Payload {
	title = strings.TrimSpace(title)
	if title == "" || l.Titles[strings.ToLower(title)] {
		return nil
	}
	return []Payload{LimitationReported{Title: title, Description: strings.TrimSpace(description), Plan: strings.TrimSpace(plan)}}
}

// Learning is what one sender's interactions taught the agent.
type Learning struct {
	Version  int64
	Lessons  []LessonLearned
	Rewards  []RewardRecorded
	Outcomes []ActionOutcomeRecorded
}

func (l *Learning) Apply(p Payload, version int64, _ time.Time) {
	l.Version = version
	switch e := p.(type) {
	case LessonLearned:
		l.Lessons = append(l.Lessons, e)
	case RewardRecorded:
		l.Rewards = append(l.Rewards, e)
	case ActionOutcomeRecorded:
		l.Outcomes = append(l.Outcomes, e)
	}
}

// Learn decides recording a lesson; none if the same rule is already
// known in that domain and project.
func (l Learning) Learn(domain, rule, project string) []Payload {
	domain, rule = strings.TrimSpace(domain), strings.TrimSpace(rule)
	if rule == "" {
		return nil
	}
	for _, x := range l.Lessons {
		if strings.EqualFold(x.Domain, domain) && strings.EqualFold(x.Rule, rule) && x.Project == project {
			return nil
		}
	}
	return []Payload{LessonLearned{Domain: domain, Rule: rule, Project: project}}
}

// Skill holds the lessons recorded for one skill.
type Skill struct {
	Version int64
	Lessons []string
}

func (s *Skill) Apply(p Payload, version int64, _ time.Time) {
	s.Version = version
	if e, ok := p.(SkillLessonRecorded); ok {
		s.Lessons = append(s.Lessons, e.Lesson)
	}
}

// Improve decides recording a lesson for the skill; none if known.
func (s Skill) Improve(skill, lesson string) []Payload {
	lesson = strings.TrimSpace(lesson)
	if lesson == "" || slices.ContainsFunc(s.Lessons, func(x string) bool { return strings.EqualFold(x, lesson) }) {
		return nil
	}
	return []Payload{SkillLessonRecorded{Skill: skill, Lesson: lesson}}
}
