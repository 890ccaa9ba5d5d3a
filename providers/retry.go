package providers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/omega-gateway/omega/internal/wait"
)

// RetryPolicy says how WithRetry retries. Zero fields take the defaults.
type RetryPolicy struct {
	MaxRetries int           // retries after the first attempt; default 3, negative means none
	Base       time.Duration // first backoff ceiling, doubled per retry; default 1s
	Max        time.Duration // backoff ceiling; default 30s
	// MaxRetryAfter caps a server's Retry-After hint so a hostile or buggy
	// server cannot park a turn for hours. Default 60s.
	MaxRetryAfter time.Duration
	// SkipTimeouts makes Timeout failures final.
	SkipTimeouts bool
	// Sleep waits d or until ctx ends; tests inject a recorder. Default: a
	// timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Jitter picks a wait in [0, ceiling]; default uniform random (full
	// jitter, so that many clients failing together spread out).
	Jitter func(ceiling time.Duration) time.Duration
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxRetries == 0 {
		p.MaxRetries = 3
	}
	if p.Base <= 0 {
		p.Base = time.Second
	}
	if p.Max <= 0 {
		p.Max = 30 * time.Second
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = 60 * time.Second
	}
	if p.Sleep == nil {
		p.Sleep = wait.Sleep
	}
	if p.Jitter == nil {
		p.Jitter = func(c time.Duration) time.Duration {
			if c <= 0 {
				return 0
			}
			return rand.N(c + 1)
		}
	}
	return p
}

// WithRetry wraps p so that retryable failures are retried with exponential
// backoff and full jitter, never waiting less than a server's Retry-After.
func WithRetry(p Provider, policy RetryPolicy, logger *slog.Logger) Provider {
	if logger == nil {
		logger = slog.Default()
	}
	return &retrying{inner: p, policy: policy.withDefaults(), logger: logger}
}

type retrying struct {
	inner  Provider
	policy RetryPolicy
	logger *slog.Logger
}

func (r *retrying) Name() string                    { return r.inner.Name() }
func (r *retrying) Check(ctx context.Context) error { return r.inner.Check(ctx) }

func (r *retrying) Complete(ctx context.Context, req Request) (Response, error) {
	return r.retry(ctx, req, func() (Response, bool, error) {
		resp, err := r.inner.Complete(ctx, req)
		return resp, false, err
	})
}

// Stream streams through the inner provider when it can, and retries only
// until the first delta: a reply the person has started to see is never
// started over, so no text is ever reported twice. A provider that cannot
// stream is answered as a whole, in one delta.
func (r *retrying) Stream(ctx context.Context, req Request, onDelta func(Delta)) (Response, error) {
	if onDelta == nil {
		onDelta = func(Delta) {}
	}
	s, ok := r.inner.(Streamer)
	if !ok {
		resp, err := r.Complete(ctx, req)
		if err == nil {
			onDelta(Delta{Text: resp.Text})
		}
		return resp, err
	}
	reported := false
	emit := func(d Delta) {
		reported = true
		onDelta(d)
	}
	return r.retry(ctx, req, func() (Response, bool, error) {
		resp, err := s.Stream(ctx, req, emit)
		return resp, reported, err
	})
}

// retry calls attempt until it succeeds, fails for good, or says that it
// must not be repeated.
func (r *retrying) retry(ctx context.Context, req Request, attempt func() (Response, bool, error)) (Response, error) {
	for n := 0; ; n++ {
		resp, final, err := attempt()
		if err == nil || final || !r.shouldRetry(req, err, n) || ctx.Err() != nil {
			return resp, err
		}
		wait := r.wait(err, n)
		r.logger.WarnContext(ctx, "provider call failed, retrying",
			"provider", r.inner.Name(), "class", ClassOf(err).String(),
			"attempt", n+1, "wait", wait, "error", err)
		if serr := r.policy.Sleep(ctx, wait); serr != nil {
			return Response{}, fmt.Errorf("waiting to retry after %w: %w", err, serr)
		}
	}
}

// shouldRetry never retries a call that resumes a session: the session
// may be gone or broken, and the caller falls back to a fresh session with
// the whole context at its first failure (which is then retried as usual).
func (r *retrying) shouldRetry(req Request, err error, attempt int) bool {
	if attempt >= r.policy.MaxRetries || req.SessionID != "" {
		return false
	}
	c := ClassOf(err)
	if c == Timeout && r.policy.SkipTimeouts {
		return false
	}
	return c.Retryable()
}

// wait is a full-jitter backoff, raised to the server's (capped) Retry-After.
func (r *retrying) wait(err error, attempt int) time.Duration {
	ceiling := r.policy.Base << attempt
	if ceiling > r.policy.Max || ceiling <= 0 {
		ceiling = r.policy.Max
	}
	wait := r.policy.Jitter(ceiling)
	if hint := retryAfterOf(err); hint > 0 {
		wait = max(wait, min(hint, r.policy.MaxRetryAfter))
	}
	return wait
}

func retryAfterOf(err error) time.Duration {
	var pe *Error
	if errors.As(err, &pe) {
		return pe.RetryAfter
	}
	return 0
}

var _ Streamer = (*retrying)(nil)
