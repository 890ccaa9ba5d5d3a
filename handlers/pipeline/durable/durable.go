// Package durable retries what is recorded after an effect outside omega
// (a provider's reply, a message sent) through a database outage: giving
// up would make the turn run again from its last recorded event and repeat
// the effect, so only the process's end (a crash, or a stop that outlasts
// Outlive's grace) may lose the outcome.
package durable

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/omega-gateway/omega/eventstore"
)

// Backoff of Write: the first retry comes soon, later ones at most every
// retryMax, so an outage of minutes costs a few log lines a minute.
const (
	retryFirst = 100 * time.Millisecond
	retryMax   = 5 * time.Second
)

// Write runs write until it succeeds, the context ends, or the error
// cannot pass by retrying (a conflict, a refused value); what and the
// turn tn name it in the log. write is told whether an earlier attempt
// failed.
func Write(ctx context.Context, log *slog.Logger, tn, what string, write func(retry bool) error) error {
	wait := retryFirst
	for attempt := 1; ; attempt++ {
		err := write(attempt > 1)
		if err == nil {
			if attempt > 1 {
				log.Info("recorded after retries", "turn", tn, "what", what, "attempts", attempt)
			}
			return nil
		}
		if ctx.Err() != nil || !Retryable(err) {
			return err
		}
		log.Warn("database unavailable while an effect's outcome awaits its record; retrying so that the effect is not repeated",
			"turn", tn, "what", what, "attempt", attempt, "retry_in", wait, "err", err)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(wait*2, retryMax)
	}
}

// Retryable reports whether a failed write may succeed later: not a
// conflict (another writer moved the stream), an invalid append, or a
// value the database refuses (SQLSTATE classes 22, 23 and 42).
func Retryable(err error) bool {
	if errors.Is(err, eventstore.ErrConcurrency) || errors.Is(err, eventstore.ErrInvalidAppend) {
		return false
	}
	var coded interface{ SQLState() string }
	if errors.As(err, &coded) {
		switch class := coded.SQLState(); {
		case strings.HasPrefix(class, "22"), strings.HasPrefix(class, "23"), strings.HasPrefix(class, "42"):
			return false
		}
	}
	return true
}

// Outlive returns a context that ends grace after ctx does (or when the
// returned cancel is called). Recording an effect that has happened under
// it survives a shutdown that began meanwhile: a graceful stop must not
// leave a sent message unrecorded, to be sent again after the restart.
func Outlive(ctx context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	out, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var timer *time.Timer
	var mu sync.Mutex
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		timer = time.AfterFunc(grace, cancel)
	})
	return out, func() {
		stop()
		mu.Lock()
		if timer != nil {
			timer.Stop()
		}
		mu.Unlock()
		cancel()
	}
}
