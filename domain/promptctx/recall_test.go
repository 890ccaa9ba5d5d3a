package promptctx

import (
	"slices"
	"testing"
)

func TestMatchSummaries(t *testing.T) {
	old := []string{ // newest first
		"Bo asked for a pasta recipe.",
		"Ana planned a trip to Porto in May.",
		"Talked about the garden and the tomatoes.",
		"Ana booked trains for the Porto trip.",
	}
	tests := []struct {
		name, message string
		n             int
		want          []string
	}{
		{"best first", "do you remember the Porto trip?", 3, []string{old[1], old[3]}},
		{"prefix of an inflection", "what did we say about tomato", 3, []string{old[2]}},
		{"bounded", "porto", 1, []string{old[1]}},
		{"more words rank higher", "trains to porto", 3, []string{old[3], old[1]}},
		{"stop and short words recall nothing", "do you remember what we said last time?", 3, nil},
		{"no match", "remember the football?", 3, nil},
		{"spanish", "¿recuerdas la receta de pasta?", 3, []string{old[0]}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MatchSummaries(tt.message, old, tt.n); !slices.Equal(got, tt.want) {
				t.Fatalf("MatchSummaries(%q) = %q, want %q", tt.message, got, tt.want)
			}
		})
	}
}
