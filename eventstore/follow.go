package eventstore

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/omega-gateway/omega/domain"
)

// FollowOptions tunes Follow.
type FollowOptions struct {
	// BatchSize is the most events handed to the handler at once.
	BatchSize int
	// PollInterval bounds how long an event can wait unseen when no change
	// signal arrives (another process, a transaction that held back the
	// visibility horizon and then rolled back).
	PollInterval time.Duration
	// Name says who follows, in the log lines of failed reads.
	Name string
	// Logger reports a read of the log that failed (nil: slog.Default()).
	Logger *slog.Logger
}

func (o FollowOptions) withDefaults() FollowOptions {
	if o.BatchSize <= 0 {
		o.BatchSize = 500
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 200 * time.Millisecond
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Bounds of the pause before a failed read of the log is tried again.
const (
	readRetryMin = 100 * time.Millisecond
	readRetryMax = 5 * time.Second
)

// readRetry paces the reads of a follower whose reads fail: a database
// that restarts or refuses connections for a while degrades a follower
// (it falls behind and catches up afterwards), it never ends it.
type readRetry struct {
	opts  FollowOptions
	pause time.Duration
	fails int
}

// failed logs a read after position after that failed and waits before
// the next; it returns ctx's error when ctx ended meanwhile.
func (r *readRetry) failed(ctx context.Context, after int64, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	r.pause = min(max(r.pause*2, readRetryMin), readRetryMax)
	r.fails++
	r.opts.Logger.Warn("follow: reading the log failed; retrying", "follower", r.opts.Name, "after", after,
		"failures", r.fails, "retry_in", r.pause, "err", err)
	t := time.NewTimer(r.pause)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// succeeded ends a run of failures, saying so once.
func (r *readRetry) succeeded(after int64) {
	if r.fails > 0 {
		r.opts.Logger.Info("follow: reading the log again", "follower", r.opts.Name, "after", after, "failures", r.fails)
	}
	r.pause, r.fails = 0, 0
}

// Follow reads the global log after position after and hands each batch to
// fn in delivery order, until ctx ends or fn fails; a read that fails is
// logged and tried again with a capped backoff. fn returns the position
// to continue after (normally the last event's); returning a smaller one
// makes Follow read those events again.
//
// A store with a shared Tail (both backends) serves every follower of the
// process from it: the log is read once per change, not once per follower.
func Follow(ctx context.Context, s Store, after int64, opts FollowOptions, fn func(context.Context, []domain.Event) (int64, error)) error {
	if shared, ok := s.(interface{ Tail() *Tail }); ok && shared.Tail() != nil {
		return shared.Tail().Follow(ctx, s, after, opts, fn)
	}
	opts = opts.withDefaults()
	changes := s.Changes(ctx)
	// A signal that found nothing readable means some transaction still
	// holds the horizon back; retry soon rather than at the next poll.
	retry := time.Millisecond
	failures := readRetry{opts: opts}
	for {
		events, err := s.ReadAll(ctx, after, opts.BatchSize)
		if err != nil {
			if err := failures.failed(ctx, after, fmt.Errorf("follow after %d: %w", after, err)); err != nil {
				return err
			}
			continue
		}
		failures.succeeded(after)
		if len(events) > 0 {
			next, err := fn(ctx, events)
			if err != nil {
				return err
			}
			after = next
			retry = time.Millisecond
			if len(events) == opts.BatchSize {
				continue
			}
		}
		wait := opts.PollInterval
		if len(events) == 0 && retry < opts.PollInterval {
			wait = retry
			retry *= 2
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-changes:
			timer.Stop()
			retry = time.Millisecond
		case <-timer.C:
		}
	}
}

// ReadAfter is ReadAll served from the store's shared Tail when after is
// in its window: the events the process has already read cost no query
// and no decoding. It may return fewer events at the end of the log than
// ReadAll would (those the Tail has not read yet), never different ones.
func ReadAfter(ctx context.Context, s Store, after int64, limit int) ([]domain.Event, error) {
	if shared, ok := s.(interface{ Tail() *Tail }); ok && shared.Tail() != nil {
		if evs, ok := shared.Tail().take(after, limit); ok {
			return evs, nil
		}
	}
	return s.ReadAll(ctx, after, limit)
}
