package catalog

import (
	"slices"
	"strings"
	"time"

	"github.com/omega-gateway/omega/domain"
)

// SkillStream holds the lessons recorded for one skill.
func SkillStream(name string) string { return "skill-" + SkillKey(name) }

// SkillLessonRecorded is a lesson learned while using a skill.
type SkillLessonRecorded struct {
	Skill  string `json:"skill"`
	Lesson string `json:"lesson"`
}

func (SkillLessonRecorded) EventType() string { return "SkillLessonRecorded" }

// Skill holds the lessons recorded for one skill.
type Skill struct {
	Version int64
	Lessons []string
}

func (s *Skill) Apply(p domain.Payload, version int64, _ time.Time) {
	s.Version = version
	if e, ok := p.(SkillLessonRecorded); ok {
		s.Lessons = append(s.Lessons, e.Lesson)
	}
}

// Improve decides recording a lesson for the skill; none if known.
func (s Skill) Improve(skill, lesson string) []domain.Payload {
	lesson = strings.TrimSpace(lesson)
	if lesson == "" || slices.ContainsFunc(s.Lessons, func(x string) bool { return strings.EqualFold(x, lesson) }) {
		return nil
	}
	return []domain.Payload{SkillLessonRecorded{Skill: skill, Lesson: lesson}}
}
