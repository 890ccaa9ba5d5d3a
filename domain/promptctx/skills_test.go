package promptctx

import (
	"slices"
	"strings"
	"testing"
)

// Skills are named only when there are some; a triggered skill's
// instructions are in both the full prompt and a resumed session's
// continuation, and an untriggered one's are in neither.
func TestBuildSkills(t *testing.T) {
	tests := []struct {
		name      string
		skills    []string
		matched   []SkillText
		wantIn    []string
		wantNot   []string
		wantBlock []string // in SectionsUsed and ContinuationSections
	}{
		{name: "no skills", wantNot: []string{"skill", "Skill"}},
		{name: "skills, none triggered", skills: []string{"weather: Forecasts", "notes"},
			wantIn: []string{"Available skills (", "\n- weather: Forecasts\n- notes"}, wantNot: []string{"instructions (this message triggered it)"}},
		{name: "one triggered", skills: []string{"weather: Forecasts"},
			matched:   []SkillText{{Name: "weather", Instructions: "Use the wx server.\n\nLessons learned for this skill:\n- Celsius"}},
			wantIn:    []string{"Skill \"weather\" instructions (this message triggered it):\nUse the wx server.", "- Celsius"},
			wantBlock: []string{BlockSkillInstructions}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := baseInput("what's the weather?")
			in.Skills, in.MatchedSkills = tt.skills, tt.matched
			out := Build(in)
			for _, s := range tt.wantIn {
				if !strings.Contains(out.System, s) {
					t.Errorf("System lacks %q:\n%s", s, out.System)
				}
			}
			for _, s := range tt.wantNot {
				if strings.Contains(out.System, s) {
					t.Errorf("System has %q:\n%s", s, out.System)
				}
			}
			in.FirstInSession = false
			cont := Build(in)
			for _, m := range tt.matched {
				if !strings.Contains(cont.Continuation, m.Instructions) {
					t.Errorf("Continuation lacks the %s instructions:\n%s", m.Name, cont.Continuation)
				}
			}
			for _, b := range tt.wantBlock {
				if !slices.Contains(out.SectionsUsed, b) || !slices.Contains(cont.ContinuationSections, b) {
					t.Errorf("%s missing: %v / %v", b, out.SectionsUsed, cont.ContinuationSections)
				}
			}
		})
	}
}
