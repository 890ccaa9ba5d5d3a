package channels

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestRunStopEndsStartAndWaits(t *testing.T) {
	var r Run
	started, returned := make(chan struct{}), make(chan struct{})
	go func() {
		ctx, end, ok := r.Begin(context.Background())
		if !ok {
			t.Error("a fresh run did not begin")
		}
		defer close(returned)
		defer end()
		close(started)
		<-ctx.Done()
	}()
	<-started
	if err := r.Stop(context.Background(), "x"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-returned:
	default:
		t.Fatal("Stop returned before Start did")
	}
	if err := r.Stop(context.Background(), "x"); err != nil {
		t.Fatalf("second stop: %v", err)
	}
	if _, _, ok := r.Begin(context.Background()); ok {
		t.Fatal("a stopped run began again")
	}
}

func TestRunStopBeforeStartAndStopTimeout(t *testing.T) {
	var idle Run
	if err := idle.Stop(context.Background(), "x"); err != nil {
		t.Fatal(err)
	}
	var busy Run
	_, end, _ := busy.Begin(context.Background())
	defer end()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := busy.Stop(ctx, "slack"); !errors.Is(err, context.DeadlineExceeded) || err.Error() != "slack: stop: context deadline exceeded" {
		t.Fatalf("stop of a run that does not end: %v", err)
	}
}
