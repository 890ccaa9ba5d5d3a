package terminal

import (
	"context"
	"testing"
)

func TestPreviewPrintsTheReplyAsItComes(t *testing.T) {
	ctx := context.Background()
	out := &syncBuffer{}
	c := &Channel{Out: out}
	p, err := c.StartPreview(ctx, "owner")
	if err != nil {
		t.Fatal(err)
	}
	w := p.(interface {
		ShowWork(ctx context.Context, text, activity string) error
	})
	steps := []struct{ text, activity, want string }{
		{"", "Reading notes.md…", ""},
		{"Your notes", "", "omega> Your notes"},
		{"Your notes", "Running tests…", "omega> Your notes"},
		{"Your notes say:\n- buy", "", "omega> Your notes say:\n- buy"},
	}
	for _, s := range steps {
		if err := w.ShowWork(ctx, s.text, s.activity); err != nil {
			t.Fatal(err)
		}
		if got := out.String(); got != s.want {
			t.Fatalf("after %q: printed %q, want %q", s.text, got, s.want)
		}
	}
	if _, err := c.FinishPreview(ctx, "owner", p.ID(), "Your notes say:\n- buy milk"); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "omega> Your notes say:\n- buy milk\n"; got != want {
		t.Errorf("printed %q, want the reply once, %q", got, want)
	}
}

func TestFinishPreviewReplacedByAnotherTextPrintsItWhole(t *testing.T) {
	ctx := context.Background()
	out := &syncBuffer{}
	c := &Channel{Out: out}
	p, _ := c.StartPreview(ctx, "owner")
	_ = p.Update(ctx, "Half a rep")
	if _, err := c.FinishPreview(ctx, "owner", p.ID(), "Sorry, that took too long."); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "omega> Half a rep\nomega> Sorry, that took too long.\n"; got != want {
		t.Errorf("printed %q, want %q", got, want)
	}
	// A preview this process does not know (it began before a restart).
	if _, err := c.FinishPreview(ctx, "owner", "terminal-9", "Whole."); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got[len(got)-len("omega> Whole.\n"):] != "omega> Whole.\n" {
		t.Errorf("printed %q, want the unknown preview's reply whole", got)
	}
}
