package skills

import "testing"

func TestMatches(t *testing.T) {
	tests := []struct {
		message  string
		triggers []string
		want     bool
	}{
		{"can you check my GitHub issues?", []string{"github"}, true},
		{"open a Pull Request please", []string{"pull request"}, true},
		{"pull the request", []string{"pull request"}, false},
		{"this is digital", []string{"git"}, false},
		{"git: status", []string{"git"}, true},
		{"gitlab", []string{"git"}, false},
		{"el tiempo en Málaga", []string{"málaga"}, true},
		{"Málagaa", []string{"málaga"}, false},
		{"weather", []string{"", "  "}, false},
		{"anything", nil, false},
		{"a (weather) question", []string{"weather"}, true},
		{"weather2", []string{"weather"}, false},
		{"the git git", []string{"git git"}, true},
		{"xgit git", []string{"git"}, true}, // the second occurrence is a word
	}
	for _, tt := range tests {
		if got := Matches(tt.message, tt.triggers); got != tt.want {
			t.Errorf("Matches(%q, %q) = %v, want %v", tt.message, tt.triggers, got, tt.want)
		}
	}
}
