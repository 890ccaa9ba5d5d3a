package telegram

import (
	"context"
	"testing"
	"time"
)

// A reply sent while the Bot API cannot be reached waits for it with the
// capped backoff and is delivered once when it is back.
func TestSendWaitsForAnUnreachableAPI(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.Stop()
	type result struct {
		chunks int
		err    error
	}
	done := make(chan result, 1)
	go func() {
		res, err := f.ch.SendText(context.Background(), "77", "held reply")
		done <- result{res.Chunks, err}
	}()
	waitUntil(t, "four waits for the API", func() bool { return len(f.sleeps.positive()) >= 4 })
	if err := f.srv.Restart(); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.chunks != 1 {
		t.Fatalf("SendText after the API came back = %d chunks, %v", r.chunks, r.err)
	}
	if got := f.srv.Messages(77); len(got) != 1 || got[0].Text != "held reply" {
		t.Fatalf("messages = %+v, want the reply once", got)
	}
	for _, w := range f.sleeps.positive() {
		if w > 5*time.Second {
			t.Fatalf("waited %v between attempts, more than the 5 s cap", w)
		}
	}
}

// An API that stays unreachable fails the send after sendOutageWait, so
// the turn completes as undelivered instead of waiting for ever.
func TestSendToAnUnreachableAPIIsBounded(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.Stop()
	if _, err := f.ch.SendText(context.Background(), "77", "lost cause"); err == nil {
		t.Fatal("want an error")
	}
	var waited time.Duration
	for _, w := range f.sleeps.positive() {
		waited += w
	}
	if waited < sendOutageWait || waited > sendOutageWait+5*time.Second {
		t.Fatalf("waited %v in all, want about %v", waited, sendOutageWait)
	}
}
