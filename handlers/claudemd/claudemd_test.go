package claudemd

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain/catalog"
)

func TestMerge(t *testing.T) {
	const tmpl = "# Template\n"
	sec := "## Projects\n\nNone yet.\n"
	block := Begin + "\n" + sec + End + "\n"
	old := Begin + "\nstale\n" + End + "\n"
	tests := []struct {
		name    string
		current []byte
		want    string
		err     error
	}{
		{"no file: the template and the section", nil, tmpl + "\n" + block, nil},
		{"an empty file", []byte{}, block, nil},
		{"the person's file without markers keeps all of it", []byte("mine\nall mine"), "mine\nall mine\n\n" + block, nil},
		{"only the section is replaced", []byte("before\n" + old + "after\n"), "before\n" + block + "after\n", nil},
		{"an end marker without newline", []byte("before\n" + Begin + "\nstale\n" + End), "before\n" + block, nil},
		{"a reworded begin marker is still ours", []byte("<!-- omega:generated:begin -->\nstale\n" + End + "\nafter"), block + "after", nil},
		{"two sections", []byte(old + old), "", ErrMarkers},
		{"an end before the begin", []byte(End + "\n" + Begin + "\n"), "", ErrMarkers},
		{"a begin without end", []byte("x\n" + Begin + "\n"), "", ErrMarkers},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Merge(tt.current, tmpl, sec)
			if !errors.Is(err, tt.err) || string(got) != tt.want {
				t.Fatalf("Merge(%q) = %q, %v; want %q, %v", tt.current, got, err, tt.want, tt.err)
			}
			if err != nil {
				return
			}
			// Merging again (a restart, a second process) changes nothing.
			again, err := Merge(got, tmpl, sec)
			if err != nil || !bytes.Equal(again, got) {
				t.Fatalf("merged twice: %q, %v", again, err)
			}
		})
	}
}

func TestSectionListsTheLogsProjectsAndSkills(t *testing.T) {
	var p catalog.Projects
	p.Apply(catalog.ProjectDefined{Name: "shop", Role: "\n# Shop keeper\nSells | things"}, 1, zero)
	p.Apply(catalog.ProjectDefined{Name: "blog", Role: "Writes <!-- posts -->"}, 2, zero)
	var s catalog.SkillCatalog
	s.Apply(catalog.SkillDefined{Name: "Weather", Description: "Forecasts", Triggers: []string{"weather", "forecast"}}, 1, zero)
	got := Section(p, s)
	for _, want := range []string{"| blog | Writes &lt;!-- posts --> |\n| shop | Shop keeper |", "| Weather | Forecasts | weather, forecast |"} {
		if !strings.Contains(got, want) {
			t.Errorf("section lacks %q:\n%s", want, got)
		}
	}
	if got := Section(catalog.Projects{}, catalog.SkillCatalog{}); strings.Count(got, "None yet.") != 2 {
		t.Errorf("empty section:\n%s", got)
	}
}

var zero time.Time
