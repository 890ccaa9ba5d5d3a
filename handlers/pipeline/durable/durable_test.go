package durable

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/omega-gateway/omega/eventstore"
)

type sqlErr string

func (e sqlErr) Error() string    { return "sql " + string(e) }
func (e sqlErr) SQLState() string { return string(e) }

func TestRetryable(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{errors.New("connection refused"), true},
		{fmt.Errorf("append: %w", eventstore.ErrConcurrency), false},
		{sqlErr("23505"), false},
		{sqlErr("08006"), true},
	} {
		if got := Retryable(tc.err); got != tc.want {
			t.Errorf("Retryable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestWriteRetriesUntilItSucceeds(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	calls := 0
	err := Write(context.Background(), log, "t1", "reply", func(retry bool) error {
		calls++
		if retry != (calls > 1) {
			t.Errorf("attempt %d told retry=%v", calls, retry)
		}
		if calls < 3 {
			return errors.New("database away")
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("Write = %v after %d calls, want success on the third", err, calls)
	}
	conflict := Write(context.Background(), log, "t1", "reply", func(bool) error { return eventstore.ErrConcurrency })
	if !errors.Is(conflict, eventstore.ErrConcurrency) {
		t.Fatalf("a conflict was retried or lost: %v", conflict)
	}
}

// Outlive's context ends grace after its parent, not with it, and at once
// when cancelled.
func TestOutlive(t *testing.T) {
	parent, stop := context.WithCancel(context.Background())
	out, cancel := Outlive(parent, 50*time.Millisecond)
	defer cancel()
	stop()
	if out.Err() != nil {
		t.Fatal("ended with its parent")
	}
	select {
	case <-out.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("still alive long after the grace")
	}

	out, cancel = Outlive(context.Background(), time.Hour)
	cancel()
	if out.Err() == nil {
		t.Fatal("alive after cancel")
	}
}
