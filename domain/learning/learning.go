package learning

import (
	"strings"
	"time"

	"github.com/omega-gateway/omega/domain"
)

// LearningStream holds what omega learned while serving sender.
func LearningStream(sender string) string { return "learning-" + sender }

const (
	LimitationsStream = "limitations"
	BugReportsStream  = "bugreports"
)

// Limitation, bug report, outcome, reward and lesson events.
type (
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
)

func (LimitationReported) EventType() string    { return "LimitationReported" }
func (BugReported) EventType() string           { return "BugReported" }
func (ActionOutcomeRecorded) EventType() string { return "ActionOutcomeRecorded" }
func (RewardRecorded) EventType() string        { return "RewardRecorded" }
func (LessonLearned) EventType() string         { return "LessonLearned" }

// RegisterLearningEvents adds the limitation, bug report and learning events to a registry.
func RegisterEvents(r *domain.Registry) {
	for _, p := range []domain.Payload{LimitationReported{}, BugReported{}, ActionOutcomeRecorded{}, RewardRecorded{}, LessonLearned{}} {
		r.Register(p, 1)
	}
}

// Limitations is the set of reported limitations, by lower-cased title.
type Limitations struct {
	Version int64
	Titles  map[string]bool
}

func (l *Limitations) Apply(p domain.Payload, version int64, _ time.Time) {
	l.Version = version
	if e, ok := p.(LimitationReported); ok {
		if l.Titles == nil {
			l.Titles = map[string]bool{}
		}
		l.Titles[strings.ToLower(e.Title)] = true
	}
}

// Report decides recording a limitation; none if the title is known.
func (l Limitations) Report(title, description, plan string) []domain.Payload {
	title = strings.TrimSpace(title)
	if title == "" || l.Titles[strings.ToLower(title)] {
		return nil
	}
	return []domain.Payload{LimitationReported{Title: title, Description: strings.TrimSpace(description), Plan: strings.TrimSpace(plan)}}
}

// Learning is what one sender's interactions taught the agent.
type Learning struct {
	Version  int64
	Lessons  []LessonLearned
	Rewards  []RewardRecorded
	Outcomes []ActionOutcomeRecorded
}

func (l *Learning) Apply(p domain.Payload, version int64, _ time.Time) {
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
func (l Learning) Learn(area, rule, project string) []domain.Payload {
	area, rule = strings.TrimSpace(area), strings.TrimSpace(rule)
	if rule == "" {
		return nil
	}
	for _, x := range l.Lessons {
		if strings.EqualFold(x.Domain, area) && strings.EqualFold(x.Rule, rule) && x.Project == project {
			return nil
		}
	}
	return []domain.Payload{LessonLearned{Domain: area, Rule: rule, Project: project}}
}
