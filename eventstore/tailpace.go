package eventstore

import (
	"context"
	"time"

	"github.com/omega-gateway/omega/domain"
)

// How often the Tail reads. After a change signal whose events are not
// readable yet, or while an awaited own commit is not (a transaction holds
// the PostgreSQL horizon back and may end without a signal), it reads
// again after tailRetryMin, doubling up to tailRetryMax, for tailRetryFor
// (nextWait). Signals closer together than gap are answered by one read.
const (
	tailRetryMin  = 2 * time.Millisecond
	tailRetryMax  = 32 * time.Millisecond
	tailRetryFor  = time.Second
	tailBusyGap   = 4 * time.Millisecond // an awaited own commit is unread
	tailUrgentGap = 8 * time.Millisecond // an applier's followers wait
)

// SetUrgent tells the Tail when a follower of this process needs other
// processes' events as soon as they commit: urgent returns true while it
// does (the process applies read models someone waits for). Otherwise a change another
// process signals is read at most every TailLazy, so that a process does
// not read the log once per append of every other process; what this
// process committed itself is read at once all the same. Without it
// every change is urgent.
func (t *Tail) SetUrgent(urgent func() bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.urgent = urgent
}

// Hurry makes the Tail read at once: a follower has just begun to need
// other processes' events (urgent turned true), and the Tail may be
// waiting out its lazy pace.
func (t *Tail) Hurry() {
	select {
	case t.hurry <- struct{}{}:
	default:
	}
}

// prompt reports whether the Tail must read now rather than at its lazy
// pace: a follower needs other processes' events at once, or this
// process committed events it has not read.
func (t *Tail) prompt() bool {
	t.mu.Lock()
	urgent := t.urgent
	t.mu.Unlock()
	return urgent == nil || urgent() || t.missing()
}

// pace delays a read a change signal asked for until gap after the last
// read began: closer signals get one read, so that a busy process does not
// read once per commit of every process. False when ctx ended.
func (t *Tail) pace(ctx context.Context, changes <-chan struct{}, last time.Time) bool {
	for {
		left := t.gap() - time.Since(last)
		if left <= 0 {
			return true
		}
		timer := time.NewTimer(left)
		select {
		case <-ctx.Done():
			timer.Stop()
			return false
		case <-changes: // perhaps a commit of this process: look again
			timer.Stop()
		case <-t.hurry:
			timer.Stop()
			return true
		case <-timer.C:
			return true
		}
	}
}

// gap is the least time between two reads signals ask for: none without
// a hint of urgency (SQLite's one process), else by what the Tail awaits.
func (t *Tail) gap() time.Duration {
	t.mu.Lock()
	urgent := t.urgent
	t.mu.Unlock()
	switch {
	case urgent == nil:
		return 0
	case t.missing():
		return tailBusyGap
	case urgent():
		return tailUrgentGap
	default:
		return t.lazy
	}
}

// SetAwaited selects the own commits a follower waits for in the log
// (the scheduler, a message it was kicked for): only those make the Tail
// read at once while the horizon holds them back, not every append of a
// busy process. Without it every commit is awaited.
func (t *Tail) SetAwaited(awaits func(domain.Event) bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.awaits = awaits
}

// missing reports whether a committed position is still unread, dropping
// those awaited too long.
func (t *Tail) missing() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for p, c := range t.awaited {
		if time.Since(c.at) > tailAwaitFor {
			t.settleLocked(p)
		}
	}
	return len(t.awaited) > 0
}

// latestAwaited is the position of the latest own commit the Tail awaits
// (0: none): once it is readable the others nearly always are (positions
// and transaction ids grow together, if not strictly), and a read finds
// any left over awaited still.
func (t *Tail) latestAwaited() int64 {
	if !t.missing() {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var last int64
	for p := range t.awaited {
		last = max(last, p)
	}
	return last
}

// horizonWait is the Tail's back-off while the horizon holds back what it waits for.
type horizonWait struct {
	retry     time.Duration // the next wait for the horizon
	signalled time.Time     // the last change signal
}

// nextWait returns how long to wait for a signal after a read (empty: it
// found nothing; got: gotAwaited before it). The back-off grows whatever
// else reads return, and starts over once one brought some of what the
// Tail awaits or it awaits nothing.
func (t *Tail) nextWait(b *horizonWait, empty bool, got uint64) time.Duration {
	t.mu.Lock()
	progressed := t.gotAwaited != got
	t.mu.Unlock()
	missing := t.missing()
	held := empty && time.Since(b.signalled) < tailRetryFor
	if progressed || (!missing && !held) {
		b.retry = tailRetryMin
	}
	wait := t.poll
	if held {
		wait = t.lazy
	}
	if t.prompt() && (missing || held) {
		wait = b.retry
		b.retry = min(b.retry*2, tailRetryMax)
	}
	return wait
}
