package pipeline_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
)

// A burst stops at the first message that must stay a turn of its own (one
// with attachments), so the sender's order holds; the merge is recorded on the head
// before the later turns are marked, and a head that crashed in between
// finishes the marks when it runs again, without a second merge.
func TestCoalesceKeepsOrderAndResumes(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	now := time.Now()
	newTurn := func(text string, at time.Time) string {
		id := uuid.NewString()
		m := message(text)
		m.ReceivedAt = at
		if text == "a photo" {
			m.Attachments = []turn.AttachmentRef{{Path: "/nonexistent/photo.png", MIME: "image/png"}}
		}
		f.appendTo(t, domain.TurnStream(id), 0, m)
		return id
	}
	head := newTurn("one", now)
	second := newTurn("two", now.Add(time.Second))
	photo := newTurn("a photo", now.Add(2*time.Second))
	after := newTurn("three", now.Add(3*time.Second))

	burst, last, err := f.driver.Burst(ctx, []string{head, second, photo, after})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(burst, []string{head, second}) || !last.Equal(now.Add(time.Second)) {
		t.Fatalf("burst %v last %v, want the head and the second message", burst, last)
	}

	// A crash after the merge was recorded, before the second was marked.
	f.appendTo(t, domain.TurnStream(head), 1, turn.MessagesMerged{Turns: []string{second}, Texts: []string{"two"}})
	if burst, last, _ := f.driver.Burst(ctx, []string{head, second}); len(burst) != 1 || !last.IsZero() {
		t.Fatalf("a merged head is a burst of %v (last %v), want itself alone at once", burst, last)
	}
	for range 2 { // idempotent
		if err := f.driver.Coalesce(ctx, head, nil); err != nil {
			t.Fatal(err)
		}
	}
	ps := f.events(t, domain.TurnStream(second))
	if into := ofType[turn.TurnMergedInto](ps); len(into) != 1 || into[0].Turn != head {
		t.Fatalf("second turn: %v", ps)
	}
	if done := ofType[turn.TurnCompleted](ps); len(done) != 1 || done[0].Status != turn.StatusMerged {
		t.Fatalf("second turn completed %v", done)
	}
	if got := ofType[turn.MessagesMerged](f.events(t, domain.TurnStream(head))); len(got) != 1 {
		t.Fatalf("head merged %d times", len(got))
	}

	// The head answers both messages in one call.
	if err := f.driver.Run(ctx, head); err != nil {
		t.Fatal(err)
	}
	reqs := f.provider.requests()
	if len(reqs) != 1 || !strings.Contains(reqs[0].Prompt, "one\ntwo") {
		t.Fatalf("requests %+v", reqs)
	}
}
