package catalog

import (
	"reflect"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain"
)

func TestSkillCatalogImport(t *testing.T) {
	var cat SkillCatalog
	cat.Apply(SkillDefined{Name: "Weather", Hash: "h1"}, 1, time.Time{})
	cat.Apply(SkillDefined{Name: "notes", Hash: "n1"}, 2, time.Time{})
	tests := []struct {
		name  string
		found []SkillDefined
		keep  []string
		want  []domain.Payload
	}{
		{"unchanged", []SkillDefined{{Name: "weather", Hash: "h1"}, {Name: "notes", Hash: "n1"}}, nil, nil},
		{"changed", []SkillDefined{{Name: "weather", Hash: "h2"}, {Name: "notes", Hash: "n1"}}, nil,
			[]domain.Payload{SkillDefined{Name: "weather", Hash: "h2"}}},
		{"new", []SkillDefined{{Name: "weather", Hash: "h1"}, {Name: "notes", Hash: "n1"}, {Name: "git", Hash: "g"}}, nil,
			[]domain.Payload{SkillDefined{Name: "git", Hash: "g"}}},
		{"removed", []SkillDefined{{Name: "notes", Hash: "n1"}}, nil, []domain.Payload{SkillRemoved{Name: "Weather"}}},
		{"broken file keeps its last definition", []SkillDefined{{Name: "notes", Hash: "n1"}}, []string{"weather"}, nil},
		{"a duplicate name counts once", []SkillDefined{{Name: "weather", Hash: "h1"}, {Name: "WEATHER", Hash: "x"}, {Name: "notes", Hash: "n1"}}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := cat.Import(tt.found, tt.keep); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Import = %#v, want %#v", got, tt.want)
			}
		})
	}
	cat.Apply(SkillRemoved{Name: "weather"}, 3, time.Time{})
	if names := cat.Names(); !reflect.DeepEqual(names, []string{"notes"}) || cat.Version != 3 {
		t.Fatalf("names %v, version %d", names, cat.Version)
	}
	if SkillStream("Git ") != "skill-git" {
		t.Fatalf("SkillStream = %q", SkillStream("Git "))
	}
}
