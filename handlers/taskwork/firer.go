// Package taskwork fires scheduled tasks when the due-work clock says they
// are due: a reminder is sent to the chat it came from, an action becomes
// a turn of its own. Every firing follows intent → act → outcome on the
// task's stream, and every intent is claimed with an expected version, so
// of several processes exactly one fires an occurrence and one sends it.
package taskwork

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/markers"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/task"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/handlers/duework"
	"github.com/omega-gateway/omega/handlers/intake"
)

// Kind is the due-work kind of tasks.
const Kind = "task"

// Channels finds the channel a task's chat is on.
type Channels interface {
	Channel(name string) (channels.Channel, bool)
}

// Profiles loads a sender's profile (language, time zone fact).
type Profiles interface {
	Load(ctx context.Context, channel, senderID string) (sender.SenderProfile, error)
}

// Clock is told when a task falls due again.
type Clock interface {
	Set(it duework.Item)
	Remove(kind, id string)
}

// Config holds a Firer's dependencies.
type Config struct {
	Store    eventstore.Store
	Registry *domain.Registry
	Channels Channels
	Profiles Profiles
	Clock    Clock
	// Kick hands a new action turn to the turn scheduler.
	Kick func(chat, tn string)
	// Location is the time zone of senders without a timezone fact.
	Location *time.Location
	Logger   *slog.Logger
	// LateAfter is how far past its due time a firing counts as late
	// (0: one minute).
	LateAfter time.Duration
	// Stale is how long a delivery attempt may stay unsettled before
	// another process presumes its sender dead and sends again (0: 30 s).
	Stale time.Duration
	// Node is this process's stable node id: an attempt it started that
	// it is not sending now was cut off by a crash of this node, and is
	// tried again at once instead of after Stale.
	Node string
	// Backoff is the pause before the second attempt of a failed
	// delivery; each further attempt waits four times longer (0: 2 s).
	Backoff time.Duration
	Now     func() time.Time
}

// Firer fires due tasks; Handle is its due-work handler.
type Firer struct {
	cfg Config

	mu      sync.Mutex
	sending map[string]int // task id -> its delivery attempts this process is making
}

// NewFirer checks the dependencies and returns a firer.
func NewFirer(cfg Config) (*Firer, error) {
	switch {
	case cfg.Store == nil, cfg.Registry == nil, cfg.Channels == nil, cfg.Profiles == nil, cfg.Clock == nil,
		cfg.Kick == nil, cfg.Logger == nil:
		return nil, errors.New("taskwork: store, registry, channels, profiles, clock, kick and logger are required")
	}
	cfg.Location = cmp.Or(cfg.Location, time.UTC)
	cfg.LateAfter = cmp.Or(cfg.LateAfter, time.Minute)
	cfg.Stale = cmp.Or(cfg.Stale, 30*time.Second)
	cfg.Backoff = cmp.Or(cfg.Backoff, 2*time.Second)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Firer{cfg: cfg, sending: map[string]int{}}, nil
}

// Handle fires the task named by it if it is due: it claims the
// occurrence, then delivers it (reminder) or starts its turn (action).
// A task that is not due yet goes back on the clock.
func (f *Firer) Handle(ctx context.Context, it duework.Item) (err error) {
	defer func() {
		if err != nil {
			// The router retries and then records the item as poisoned;
			// the clock looks again later either way, so a task outlives
			// an outage of the database without waiting for a restart.
			f.cfg.Clock.Set(duework.Item{Kind: Kind, ID: it.ID, Due: f.cfg.Now().Add(time.Minute)})
		}
	}()
	stream := task.TaskStream(it.ID)
	var zone *senderZone
	for range 10 {
		var t task.Task
		version, err := eventstore.Fold(ctx, f.cfg.Store, f.cfg.Registry, stream, &t)
		if err != nil {
			return err
		}
		if t.Status == "" {
			return nil
		}
		if zone == nil {
			if zone, err = f.senderZone(ctx, t); err != nil {
				return err
			}
		}
		now := f.cfg.Now()
		switch {
		case t.Firing == nil:
			due, ok := t.NextDue()
			if !ok {
				return nil
			}
			if due.After(now) {
				f.cfg.Clock.Set(duework.Item{Kind: Kind, ID: t.ID, Due: due})
				return nil
			}
		case f.maybeBeingSent(t, now):
			// Another process (or an earlier run of this one) is sending;
			// look again once it would count as dead.
			f.cfg.Clock.Set(duework.Item{Kind: Kind, ID: t.ID, Due: t.Changed.Add(f.cfg.Stale)})
			return nil
		}
		done, err := f.step(ctx, &t, version, now, zone)
		if err != nil || done {
			return err
		}
	}
	return fmt.Errorf("fire %s: the task kept changing under the firer", stream)
}

// step claims what comes next for the task — the firing of a due
// occurrence, the next delivery attempt, the action's turn — with the
// version it was read at, and performs it. It reports done unless a
// conflict means the task must be read again.
func (f *Firer) step(ctx context.Context, t *task.Task, version int64, now time.Time, zone *senderZone) (bool, error) {
	var claim []domain.Payload
	key := ""
	if t.Firing == nil {
		ps, err := t.Fire(now, zone.loc, f.cfg.LateAfter)
		if err != nil {
			return false, nil //nolint:nilerr // the task changed since it was read: nothing to fire
		}
		claim, key = ps, "fire/"+strconv.Itoa(t.Fired+1)
		applyAll(t, version, now, ps)
	}
	if t.Kind == task.TaskKindAction {
		if claim != nil {
			if err := f.append(ctx, *t, version, key, claim...); err != nil {
				return !errors.Is(err, eventstore.ErrConcurrency), ignoreConflict(err)
			}
			version += int64(len(claim))
		}
		return f.startAction(ctx, *t, version)
	}
	// A reminder's first attempt is claimed with its firing: one append.
	start, unsettled, err := t.StartDelivery()
	if err != nil {
		return true, nil //nolint:nilerr // no delivery to start (settled meanwhile): the firing is done
	}
	start.Owner = f.cfg.Node
	claim = append(claim, start)
	if key == "" {
		key = fmt.Sprintf("deliver/%d/%d", start.Occurrence, start.Attempt)
	}
	// Marked before the claim is visible, so that this process never
	// takes its own send in progress for one a crash cut off.
	defer f.markSending(t.ID)()
	if err := f.append(ctx, *t, version, key, claim...); err != nil {
		return !errors.Is(err, eventstore.ErrConcurrency), ignoreConflict(err)
	}
	applyAll(t, version, now, []domain.Payload{start})
	return true, f.deliver(ctx, *t, start, unsettled, zone)
}

// markSending notes that this process is making a delivery attempt of
// the task until the returned func is called.
func (f *Firer) markSending(id string) func() {
	f.mu.Lock()
	f.sending[id]++
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.sending[id]--; f.sending[id] <= 0 {
			delete(f.sending, id)
		}
	}
}

// maybeBeingSent reports an open delivery attempt that may still be in
// progress: this process's own, or another process's until it is stale.
func (f *Firer) maybeBeingSent(t task.Task, now time.Time) bool {
	return t.Firing.Open && now.Sub(t.Changed) < f.cfg.Stale && !f.cutOffHere(t)
}

// cutOffHere reports an open attempt this node started that this process
// is not making: an earlier run of the node died around the send (the
// node id is kept across restarts and held by one process at a time).
func (f *Firer) cutOffHere(t task.Task) bool {
	if f.cfg.Node == "" || t.Firing.Owner != f.cfg.Node {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sending[t.ID] == 0
}

func applyAll(t *task.Task, version int64, now time.Time, ps []domain.Payload) {
	for i, p := range ps {
		t.Apply(p, version+int64(i)+1, now)
	}
}

func ignoreConflict(err error) error {
	if errors.Is(err, eventstore.ErrConcurrency) {
		return nil
	}
	return err
}

// deliver sends the reminder whose attempt is on record and records the
// outcome; a failure that may pass is tried again after a backoff.
func (f *Firer) deliver(ctx context.Context, t task.Task, start task.TaskDeliveryStarted, unsettled bool, zone *senderZone) error {
	occ := start.Occurrence
	key := fmt.Sprintf("deliver/%d/%d", occ, start.Attempt)
	text := i18n.Text(zone.lang, i18n.Reminder, t.Description)
	if t.Firing.Late {
		text += " " + i18n.TaskText(zone.lang, i18n.TaskLate, localTime(t.Firing.Due, f.cfg.Now(), zone.loc))
	}
	res, sendErr := f.send(ctx, t, text)
	if sendErr == nil {
		return f.append(ctx, t, 0, key+"/ok", task.TaskDelivered{ID: t.ID, Occurrence: occ, Attempt: start.Attempt,
			Text: text, PlatformIDs: res.PlatformIDs, MaybeDuplicate: unsettled})
	}
	class := channels.FailureClass(sendErr)
	final := hopeless(class) || start.Attempt >= task.MaxDeliveryAttempts
	f.cfg.Logger.Warn("reminder not delivered", "task", t.ID, "occurrence", occ, "attempt", start.Attempt,
		"class", class, "final", final, "err", sendErr)
	if err := f.append(ctx, t, 0, key+"/failed", task.TaskDeliveryFailed{ID: t.ID, Occurrence: occ, Attempt: start.Attempt,
		Class: class, Error: sendErr.Error(), Final: final}); err != nil {
		return err
	}
	if !final {
		wait := f.cfg.Backoff << (2 * (start.Attempt - 1))
		f.cfg.Clock.Set(duework.Item{Kind: Kind, ID: t.ID, Due: f.cfg.Now().Add(wait)})
	}
	return nil
}

func (f *Firer) send(ctx context.Context, t task.Task, text string) (channels.SendResult, error) {
	ch, ok := f.cfg.Channels.Channel(t.Channel)
	if !ok {
		return channels.SendResult{}, fmt.Errorf("%w: %s", channels.ErrNoChannel, t.Channel)
	}
	return ch.SendText(ctx, t.ChatID, text)
}

// hopeless failures are not retried: the platform said no for good.
func hopeless(class string) bool {
	return class == "blocked" || class == "rejected" || class == "no_channel"
}

// startAction turns the occurrence into a turn whose id derives from the
// task and occurrence, so a re-fire after a crash finds the same turn.
func (f *Firer) startAction(ctx context.Context, t task.Task, version int64) (bool, error) {
	occ := t.Firing.Occurrence
	platformID := fmt.Sprintf("task:%s:%d", t.ID, occ)
	turnID := intake.TurnID(channels.Incoming{Channel: t.Channel, PlatformID: platformID})
	msg := turn.MessageReceived{
		Channel: t.Channel, SenderID: t.SenderID, ChatID: t.ChatID, IsGroup: t.IsGroup, Text: actionPrompt(t.Description),
		PlatformID: platformID, ReceivedAt: f.cfg.Now().UTC(),
		Task: &turn.TaskOrigin{ID: t.ID, Occurrence: occ, Project: t.Project, Description: t.Description},
	}
	ev, err := domain.NewEventFrom(msg, domain.Metadata{CorrelationID: turnID, CausationID: task.TaskStream(t.ID), Channel: t.Channel, Sender: t.SenderID, Project: t.Project})
	if err != nil {
		return true, err
	}
	if _, err := f.cfg.Store.Append(ctx, domain.TurnStream(turnID), eventstore.NoStream, ev); err != nil && !errors.Is(err, eventstore.ErrConcurrency) {
		return true, fmt.Errorf("start action turn of task %s: %w", t.ID, err)
	}
	err = f.append(ctx, t, version, fmt.Sprintf("action/%d", occ), task.TaskActionStarted{ID: t.ID, Occurrence: occ, TurnID: turnID})
	if errors.Is(err, eventstore.ErrConcurrency) {
		return false, nil
	}
	if err != nil {
		return true, err
	}
	f.cfg.Kick(msg.Chat().Key(), turnID) // turns are ordered per chat
	return true, nil
}

// actionPrompt is what the provider is asked when an action falls due.
func actionPrompt(description string) string {
	return "A scheduled action is due now. Carry it out and reply with the result for the user.\n" +
		"Action: " + markers.Neutralize(description) + "\n" +
		"End with ACTION_OUTCOME: success or ACTION_OUTCOME: failed — <reason>."
}

// senderZone is a sender's time zone (fact "timezone", else the
// configured one) and language.
type senderZone struct {
	loc  *time.Location
	lang string
}

func (f *Firer) senderZone(ctx context.Context, t task.Task) (*senderZone, error) {
	p, err := f.cfg.Profiles.Load(ctx, t.Channel, t.SenderID)
	if err != nil {
		return nil, fmt.Errorf("load profile of %s-%s: %w", t.Channel, t.SenderID, err)
	}
	z := &senderZone{loc: f.cfg.Location, lang: i18n.OrDefault(p.Language)}
	if tz := p.Facts["timezone"]; tz != "" {
		if l, err := time.LoadLocation(tz); err == nil {
			z.loc = l
		}
	}
	return z, nil
}

// append records events on the task stream; version 0 appends whatever
// the stream's version (an outcome of an attempt this run claimed).
func (f *Firer) append(ctx context.Context, t task.Task, version int64, key string, ps ...domain.Payload) error {
	md := domain.Metadata{CorrelationID: t.ID, CausationID: task.TaskStream(t.ID) + "/" + key, Channel: t.Channel, Sender: t.SenderID, Project: t.Project}
	evs, err := domain.NewEvents(md, ps...)
	if err != nil {
		return err
	}
	expected := eventstore.Any
	if version > 0 {
		expected = eventstore.Exact(version)
	}
	if _, err := f.cfg.Store.Append(ctx, task.TaskStream(t.ID), expected, evs...); err != nil {
		return fmt.Errorf("task %s: record %s: %w", t.ID, key, err)
	}
	return nil
}

// localTime shows a due time the way the late note needs it: the time
// alone when it was today, with the date otherwise.
func localTime(due, now time.Time, loc *time.Location) string {
	d, n := due.In(loc), now.In(loc)
	if d.YearDay() == n.YearDay() && d.Year() == n.Year() {
		return d.Format("15:04")
	}
	return d.Format("2 Jan 15:04")
}
