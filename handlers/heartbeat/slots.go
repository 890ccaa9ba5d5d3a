package heartbeat

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain/heartbeat"
	"github.com/omega-gateway/omega/domain/markers"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/handlers/duework"
)

// scopeRun is one checklist to run in a slot.
type scopeRun struct {
	scope, project string
	hb             heartbeat.Heartbeat
	excluded       []string
}

// Start puts the global scope on the clock: its current slot is looked at
// at once, so a cycle a crash left unfinished resumes.
func (r *Runner) Start() {
	start(r.cfg.Clock, r.cfg.Now())
}

func start(c Clock, now time.Time) {
	c.Set(duework.Item{Kind: Kind, ID: heartbeat.GlobalHeartbeat, Due: now})
}

// Restarts puts the global scope on the clock when a reply's markers
// changed the interval (HEARTBEAT_INTERVAL), so the next check-in follows
// the new one.
func Restarts(c Clock) duework.MarkerWake {
	return duework.MarkerWake{Marker: markers.NameHeartbeatInterval, Item: duework.Item{Kind: Kind, ID: heartbeat.GlobalHeartbeat}, Clock: c}
}

// Handle runs the slot that is due (or resumes it): the global checklist,
// then each project's, and puts the next wake-up on the clock: the next
// slot, or the start of active hours when they are over. It never wakes
// in between.
func (r *Runner) Handle(ctx context.Context, it duework.Item) error {
	scope := it.ID
	if r.cfg.DataDir != "" && scope == heartbeat.GlobalHeartbeat {
		if err := (Checklists{Store: r.cfg.Store, Registry: r.cfg.Registry}).ImportFiles(ctx, r.cfg.DataDir); err != nil {
			r.cfg.Logger.Warn("heartbeat: HEARTBEAT.md not imported", "err", err)
		}
	}
	hb, err := r.checklist(ctx, scope)
	if err != nil {
		r.cfg.Clock.Set(duework.Item{Kind: Kind, ID: scope, Due: r.cfg.Now().Add(time.Minute)})
		return err
	}
	interval := r.interval(hb)
	now := r.cfg.Now()
	slot := heartbeat.HeartbeatSlot(now, interval, r.cfg.Location)
	defer r.schedule(scope, interval)

	runs, err := r.scopes(ctx, scope, hb)
	if err != nil {
		return err
	}
	if !r.resumed.Swap(true) {
		for _, s := range runs {
			if err := r.resumeOnly(ctx, heartbeat.HeartbeatCycleStream(s.scope, slot.Add(-interval))); err != nil {
				return err
			}
		}
	}
	if !it.Due.IsZero() && now.Sub(it.Due) > heartbeat.HeartbeatOvershoot {
		// The wake-up came long after its time: the machine slept.
		r.cfg.Logger.Warn("heartbeat: system sleep detected, re-aligning", "scope", scope,
			"target", it.Due.In(r.cfg.Location).Format("15:04"), "actual", now.In(r.cfg.Location).Format("15:04"))
	}
	// A slot is run only near its boundary: a late wake-up re-aligns to
	// the next one instead of firing in a burst.
	skip := now.Sub(slot) > heartbeat.HeartbeatOvershoot
	if !r.cfg.Active.Contains(slot, r.cfg.Location) {
		skip = true
	}
	var errs []error
	for _, s := range runs {
		errs = append(errs, r.runScope(ctx, s, slot, skip))
	}
	return errors.Join(errs...)
}

// scopes are the checklists of a slot: the global one, without sections
// named like a project that runs its own, then each active project's.
func (r *Runner) scopes(ctx context.Context, scope string, hb heartbeat.Heartbeat) ([]scopeRun, error) {
	global := scopeRun{scope: scope, hb: hb}
	if scope != heartbeat.GlobalHeartbeat || r.cfg.DataDir == "" {
		return []scopeRun{global}, nil
	}
	entries, err := os.ReadDir(filepath.Join(r.cfg.DataDir, "projects"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("heartbeat: list projects: %w", err)
	}
	runs := []scopeRun{global}
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || name == heartbeat.GlobalHeartbeat {
			continue
		}
		phb, err := r.checklist(ctx, name)
		if err != nil {
			return nil, err
		}
		if _, n := heartbeat.HeartbeatChecklist(phb.Items, phb.Suppressed, nil); n == 0 {
			continue
		}
		off, err := r.cfg.Context.Deactivated(ctx, r.cfg.Target, name)
		if err != nil {
			return nil, err
		}
		if off {
			continue
		}
		runs[0].excluded = append(runs[0].excluded, name)
		runs = append(runs, scopeRun{scope: name, project: name, hb: phb})
	}
	return runs, nil
}

// runScope resumes the scope's cycle of slot, or starts it unless skip.
func (r *Runner) runScope(ctx context.Context, s scopeRun, slot time.Time, skip bool) error {
	stream := heartbeat.HeartbeatCycleStream(s.scope, slot)
	st, err := r.load(ctx, stream)
	if err != nil {
		return err
	}
	if st.Started != nil {
		return r.resume(ctx, stream, st)
	}
	if skip {
		return nil
	}
	lines, count := heartbeat.HeartbeatChecklist(s.hb.Items, s.hb.Suppressed, s.excluded)
	if count == 0 {
		return nil // nothing to check: no call, no event
	}
	if err := r.deliverable(); err != nil {
		// A check-in exists to tell someone: with nobody to tell, the call
		// would be spent for an alert recorded as undeliverable. The slot
		// is not claimed, so a process that can deliver runs it.
		if !r.toldUndeliverable.Swap(true) {
			r.cfg.Logger.Warn("heartbeat: check-ins are skipped, no provider call, until alerts can be delivered",
				"scope", s.scope, "reason", err, "fix", "set OMEGA_HEARTBEAT_TARGET to a running channel (telegram:<chat id> or whatsapp:<number>)")
		}
		return nil
	}
	return r.begin(ctx, s.scope, s.project, slot, lines)
}

// deliverable says why an alert could not reach the target, nil when it
// can: the target is set and its channel runs in this process.
func (r *Runner) deliverable() error {
	if r.cfg.Target.Channel == "" {
		return ErrNoTarget
	}
	if _, ok := r.cfg.Channels.Channel(r.cfg.Target.Channel); !ok {
		return fmt.Errorf("%w: %s", channels.ErrNoChannel, r.cfg.Target.Channel)
	}
	return nil
}

func (r *Runner) resumeOnly(ctx context.Context, stream string) error {
	st, err := r.load(ctx, stream)
	if err != nil || st.Started == nil {
		return err
	}
	return r.resume(ctx, stream, st)
}

// resume takes up an unfinished cycle: its own after a restart (the
// identity is held by one live process at a time), another's once it has
// gone stale. Taking it up is claimed, so one process resumes it; a cycle
// another live process is running is left to it.
func (r *Runner) resume(ctx context.Context, stream string, st heartbeat.HeartbeatCycle) error {
	if st.Completed != nil {
		return nil
	}
	if st.Owner != r.cfg.Owner && r.cfg.Now().Sub(st.Changed) < r.cfg.Stale {
		return nil
	}
	r.cfg.Logger.Info("heartbeat: resuming an unfinished cycle", "stream", stream, "owner", st.Owner)
	if err := r.append(ctx, stream, eventstore.Exact(st.Version), "resume/"+strconv.FormatInt(st.Version, 10),
		heartbeat.HeartbeatCycleResumed{Owner: r.cfg.Owner}); err != nil {
		return ignoreConflict(err)
	}
	return r.drive(ctx, stream)
}

func ignoreConflict(err error) error {
	if errors.Is(err, eventstore.ErrConcurrency) {
		return nil
	}
	return err
}

// schedule sets the scope's next wake-up: the next slot inside active
// hours (straight to their start when the next slot falls outside).
func (r *Runner) schedule(scope string, interval time.Duration) {
	now := r.cfg.Now()
	next := heartbeat.NextHeartbeatSlot(now, interval, r.cfg.Location)
	if !r.cfg.Active.Contains(next, r.cfg.Location) {
		start := r.cfg.Active.NextStart(now, r.cfg.Location)
		next = heartbeat.HeartbeatSlot(start, interval, r.cfg.Location)
		if next.Before(start) {
			next = heartbeat.NextHeartbeatSlot(start, interval, r.cfg.Location)
		}
		r.cfg.Logger.Info("heartbeat: quiet hours", "scope", scope, "until", next.In(r.cfg.Location).Format("15:04"),
			"in", next.Sub(now).Round(time.Minute))
	}
	r.cfg.Clock.Set(duework.Item{Kind: Kind, ID: scope, Due: next})
}

func (r *Runner) interval(hb heartbeat.Heartbeat) time.Duration {
	if hb.Interval > 0 {
		return time.Duration(hb.Interval) * time.Minute
	}
	return r.cfg.Interval
}

// Next says when the scope's next check-in falls due (for /heartbeat).
func (r *Runner) Next(ctx context.Context, scope string) (time.Time, error) {
	hb, err := r.checklist(ctx, scope)
	if err != nil {
		return time.Time{}, err
	}
	now := r.cfg.Now()
	interval := r.interval(hb)
	next := heartbeat.NextHeartbeatSlot(now, interval, r.cfg.Location)
	if !r.cfg.Active.Contains(next, r.cfg.Location) {
		next = r.cfg.Active.NextStart(now, r.cfg.Location)
	}
	return next, nil
}

// checklist folds the scope's checklist stream.
func (r *Runner) checklist(ctx context.Context, scope string) (heartbeat.Heartbeat, error) {
	var hb heartbeat.Heartbeat
	_, err := eventstore.Fold(ctx, r.cfg.Store, r.cfg.Registry, heartbeat.HeartbeatStream(scope), &hb)
	return hb, err
}
