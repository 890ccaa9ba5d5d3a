package providers

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"testing"
	"time"
)

// scripted is a Provider that fails with errs in order, then succeeds.
type scripted struct {
	errs  []error
	calls int
}

func (s *scripted) Name() string                { return "scripted" }
func (s *scripted) Check(context.Context) error { return nil }
func (s *scripted) Complete(context.Context, Request) (Response, error) {
	s.calls++
	if s.calls <= len(s.errs) {
		return Response{}, s.errs[s.calls-1]
	}
	return Response{Text: "ok"}, nil
}

func classErr(c Class) error { return &Error{Class: c, Provider: "scripted"} }

func TestWithRetry(t *testing.T) {
	rateLimited := &Error{Class: RateLimited, Provider: "scripted", RetryAfter: 10 * time.Minute}
	tests := []struct {
		name      string
		policy    RetryPolicy
		errs      []error
		wantErr   bool
		wantCalls int
		wantWaits []time.Duration
	}{
		{"success needs no retry", RetryPolicy{}, nil, false, 1, nil},
		{"server errors back off exponentially", RetryPolicy{}, []error{classErr(Server), classErr(Server), classErr(Timeout)},
			false, 4, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}},
		{"gives up after max retries", RetryPolicy{MaxRetries: 2}, []error{classErr(Server), classErr(Server), classErr(Server)},
			true, 3, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}},
		{"negative max retries disables retries", RetryPolicy{MaxRetries: -1}, []error{classErr(Server)}, true, 1, nil},
		{"backoff ceiling", RetryPolicy{Max: 150 * time.Millisecond}, []error{classErr(Server), classErr(Server), classErr(Server)},
			false, 4, []time.Duration{100 * time.Millisecond, 150 * time.Millisecond, 150 * time.Millisecond}},
		{"retry-after is capped", RetryPolicy{MaxRetryAfter: 45 * time.Second}, []error{rateLimited}, false, 2, []time.Duration{45 * time.Second}},
		{"auth is final", RetryPolicy{}, []error{classErr(Auth)}, true, 1, nil},
		{"bad request is final", RetryPolicy{}, []error{classErr(BadRequest)}, true, 1, nil},
		{"unclassified is final", RetryPolicy{}, []error{errors.New("boom")}, true, 1, nil},
		{"timeouts can be final", RetryPolicy{SkipTimeouts: true}, []error{classErr(Timeout)}, true, 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var waits []time.Duration
			tt.policy.Base = 100 * time.Millisecond
			tt.policy.Sleep = func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
			// The largest possible wait makes the ceiling observable.
			tt.policy.Jitter = func(c time.Duration) time.Duration { return c }
			inner := &scripted{errs: tt.errs}
			resp, err := WithRetry(inner, tt.policy, discardLogger()).Complete(t.Context(), Request{})
			if (err != nil) != tt.wantErr {
				t.Fatalf("err %v, want error: %v", err, tt.wantErr)
			}
			if err == nil && resp.Text != "ok" {
				t.Errorf("text %q", resp.Text)
			}
			if inner.calls != tt.wantCalls || !slices.Equal(waits, tt.wantWaits) {
				t.Errorf("calls %d waits %v, want %d %v", inner.calls, waits, tt.wantCalls, tt.wantWaits)
			}
		})
	}
}

// A resumed session's failure goes back at once: the caller falls back to
// a fresh session, and only that call is retried.
func TestWithRetryLeavesAFailedResumeToTheCaller(t *testing.T) {
	policy := RetryPolicy{Sleep: func(context.Context, time.Duration) error { return nil }}
	inner := &scripted{errs: []error{classErr(Server), classErr(Server)}}
	p := WithRetry(inner, policy, discardLogger())
	if _, err := p.Complete(t.Context(), Request{SessionID: "sess-gone"}); err == nil || inner.calls != 1 {
		t.Fatalf("resumed call: err %v after %d calls, want the first failure", err, inner.calls)
	}
	if resp, err := p.Complete(t.Context(), Request{}); err != nil || resp.Text != "ok" || inner.calls != 3 {
		t.Fatalf("fresh call: %v after %d calls, want a retried success", err, inner.calls)
	}
}

func TestWithRetryStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	inner := &scripted{errs: []error{classErr(Server), classErr(Server)}}
	p := WithRetry(inner, RetryPolicy{Base: time.Hour, Jitter: func(c time.Duration) time.Duration { return c }}, discardLogger())
	time.AfterFunc(50*time.Millisecond, cancel)

	_, err := p.Complete(ctx, Request{})
	if !errors.Is(err, context.Canceled) || ClassOf(err) != Server {
		t.Fatalf("got %v, want the Server error and context.Canceled", err)
	}
	if inner.calls != 1 {
		t.Errorf("%d calls, want 1", inner.calls)
	}
}

func TestFullJitterStaysInRange(t *testing.T) {
	p := RetryPolicy{}.withDefaults()
	for range 1000 {
		if d := p.Jitter(time.Second); d < 0 || d > time.Second {
			t.Fatalf("jitter %v outside [0, 1s]", d)
		}
	}
}

func contextDeadline() error { return context.DeadlineExceeded }

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
