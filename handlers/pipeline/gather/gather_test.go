package gather

import (
	"context"
	"slices"
	"testing"
)

// A project's lessons come first, labelled, then the general ones in the
// room left; another project's never.
func TestLearningIsScopedToTheActiveProject(t *testing.T) {
	var own, general []string
	own, general = scoped(own, general, "", "shop", "general rule")
	own, general = scoped(own, general, "shop", "shop", "shop rule")
	own, general = scoped(own, general, "blog", "shop", "blog rule")
	got := projectFirst(own, general)
	if want := []string{"[shop] shop rule", "general rule"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	many := make([]string, maxLearning+5)
	if got := projectFirst(many, []string{"general"}); len(got) != maxLearning {
		t.Fatalf("%d items reach the prompt, want %d", len(got), maxLearning)
	}
}

type summariesOnly struct {
	Reads
	recent []string
}

func (s summariesOnly) RecentSummaries(_ context.Context, _, _ string, limit int) ([]string, error) {
	return s.recent[:min(limit, len(s.recent))], nil
}

// A continuing conversation recalls nothing unless asked; a new one gets
// the recent summaries.
func TestSummariesOnlyForANewConversationOrARecall(t *testing.T) {
	g := &Gatherer{Read: summariesOnly{recent: []string{"a", "b", "c", "d"}}}
	ctx := context.Background()
	if got, _ := g.summaries(ctx, "chat", "", "hello", false); got != nil {
		t.Errorf("a continuing conversation recalled %q", got)
	}
	got, err := g.summaries(ctx, "chat", "", "hello", true)
	if err != nil || !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("a new conversation recalled %q (%v), want the 3 recent", got, err)
	}
}

func TestNewNeedsItsCollaborators(t *testing.T) {
	if _, err := New(Gatherer{}); err == nil {
		t.Fatal("a gatherer without a store was made")
	}
}
