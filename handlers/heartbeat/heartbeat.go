// Package heartbeat runs the periodic check-in: at each clock-aligned slot
// it reads the checklist from the log, asks the provider to work through
// it (grouped by domain when it is long), applies the reply's markers and
// sends the user what needs attention — or nothing when all is well.
//
// Each check-in is a stream heartbeat-<scope>-<slot> driven like a turn:
// the first append expects no stream, so of several processes exactly one
// runs a slot; every provider call is recorded before it is made and its
// reply before anything else, so a resumed cycle never calls again for a
// group whose reply is on record.
package heartbeat

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/markers"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/handlers/duework"
	"github.com/omega-gateway/omega/providers"
)

// Kind is the due-work kind of heartbeat cycles; an item's id is the scope.
const Kind = "heartbeat"

// Provider completes one prompt.
type Provider interface {
	Complete(ctx context.Context, req providers.Request) (providers.Response, error)
}

// Markers applies a reply's markers as a turn would, with turn standing
// for the check-in; it returns the text without markers and what each
// marker did.
type Markers func(ctx context.Context, turn *domain.Turn, raw string) (string, []domain.AppliedMarker, error)

// Channels finds the channel alerts go to.
type Channels interface {
	Channel(name string) (channels.Channel, bool)
}

// Clock is told when the next cycle falls due.
type Clock interface {
	Set(it duework.Item)
}

// Context builds what a check-in is given besides its checklist: the
// enrichment (facts, summaries, lessons, outcomes) and the system prompt.
type Context interface {
	Enrichment(ctx context.Context, target Target, project string) (string, error)
	System(project string) string
	// Deactivated says whether the owner switched the project off.
	Deactivated(ctx context.Context, target Target, project string) (bool, error)
}

// Prompts are the heartbeat prompt templates.
type Prompts interface {
	HeartbeatPrompt(checklist string) string
	HeartbeatClassify(numbered string) string
}

// Target is where alerts go: a channel and chat; zero when nobody is
// configured (alerts are then recorded as undeliverable).
type Target struct {
	Channel string
	Chat    string
}

func (t Target) String() string {
	if t.Channel == "" {
		return ""
	}
	return t.Channel + ":" + t.Chat
}

// Config holds the runner's dependencies and settings.
type Config struct {
	Store    eventstore.Store
	Registry *domain.Registry
	Provider Provider
	Markers  Markers
	Channels Channels
	Clock    Clock
	Context  Context
	Prompts  Prompts
	Logger   *slog.Logger

	Target   Target
	Interval time.Duration // default when no HEARTBEAT_INTERVAL was recorded
	Active   domain.ActiveHours
	Location *time.Location
	// ModelFast classifies; ModelComplex runs the groups.
	ModelFast, ModelComplex string
	WorkDir                 string
	// Parallel bounds the groups called at once (0: 3).
	Parallel int
	// Owner is this process's node identity: a cycle it started and did
	// not finish is its own to resume after a restart.
	Owner string
	// Stale is how long another process's unfinished cycle is left alone
	// before this one takes it up (0: 15m, beyond a provider call).
	Stale time.Duration
	// DataDir holds the HEARTBEAT.md files imported at each cycle and the
	// projects whose checklists run after the global one; empty: neither.
	DataDir string
	Now     func() time.Time
}

// Runner is the heartbeat loop; Handle is its due-work handler.
type Runner struct {
	cfg Config
	// resumed: the previous slot was looked at once since start, so a
	// cycle cut off just before a boundary is resumed too.
	resumed atomic.Bool
	// toldUndeliverable: the log already says why check-ins are skipped.
	toldUndeliverable atomic.Bool
}

// New checks the dependencies and returns a runner.
func New(cfg Config) (*Runner, error) {
	switch {
	case cfg.Store == nil, cfg.Registry == nil, cfg.Provider == nil, cfg.Markers == nil, cfg.Channels == nil,
		cfg.Clock == nil, cfg.Context == nil, cfg.Prompts == nil, cfg.Logger == nil:
		return nil, errors.New("heartbeat: store, registry, provider, markers, channels, clock, context, prompts and logger are required")
	}
	cfg.Interval = cmp.Or(cfg.Interval, 30*time.Minute)
	cfg.Location = cmp.Or(cfg.Location, time.UTC)
	cfg.Parallel = cmp.Or(cfg.Parallel, 3)
	cfg.Stale = cmp.Or(cfg.Stale, 15*time.Minute)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Runner{cfg: cfg}, nil
}

// scopeRun is one checklist to run in a slot.
type scopeRun struct {
	scope, project string
	hb             domain.Heartbeat
	excluded       []string
}

// Start puts the global scope on the clock: its current slot is looked at
// at once, so a cycle a crash left unfinished resumes.
func (r *Runner) Start() {
	start(r.cfg.Clock, r.cfg.Now())
}

func start(c Clock, now time.Time) {
	c.Set(duework.Item{Kind: Kind, ID: domain.GlobalHeartbeat, Due: now})
}

// Restarts puts the global scope on the clock when a reply's markers
// changed the interval (HEARTBEAT_INTERVAL), so the next check-in follows
// the new one.
func Restarts(c Clock) duework.MarkerWake {
	return duework.MarkerWake{Marker: markers.NameHeartbeatInterval, Item: duework.Item{Kind: Kind, ID: domain.GlobalHeartbeat}, Clock: c}
}

// Handle runs the slot that is due (or resumes it): the global checklist,
// then each project's, and puts the next wake-up on the clock: the next
// slot, or the start of active hours when they are over. It never wakes
// in between.
func (r *Runner) Handle(ctx context.Context, it duework.Item) error {
	scope := it.ID
	if r.cfg.DataDir != "" && scope == domain.GlobalHeartbeat {
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
	slot := domain.HeartbeatSlot(now, interval, r.cfg.Location)
	defer r.schedule(scope, interval)

	runs, err := r.scopes(ctx, scope, hb)
	if err != nil {
		return err
	}
	if !r.resumed.Swap(true) {
		for _, s := range runs {
			if err := r.resumeOnly(ctx, domain.HeartbeatCycleStream(s.scope, slot.Add(-interval))); err != nil {
				return err
			}
		}
	}
	if !it.Due.IsZero() && now.Sub(it.Due) > domain.HeartbeatOvershoot {
		// The wake-up came long after its time: the machine slept.
		r.cfg.Logger.Warn("heartbeat: system sleep detected, re-aligning", "scope", scope,
			"target", it.Due.In(r.cfg.Location).Format("15:04"), "actual", now.In(r.cfg.Location).Format("15:04"))
	}
	// A slot is run only near its boundary: a late wake-up re-aligns to
	// the next one instead of firing in a burst.
	skip := now.Sub(slot) > domain.HeartbeatOvershoot
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
func (r *Runner) scopes(ctx context.Context, scope string, hb domain.Heartbeat) ([]scopeRun, error) {
	global := scopeRun{scope: scope, hb: hb}
	if scope != domain.GlobalHeartbeat || r.cfg.DataDir == "" {
		return []scopeRun{global}, nil
	}
	entries, err := os.ReadDir(filepath.Join(r.cfg.DataDir, "projects"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("heartbeat: list projects: %w", err)
	}
	runs := []scopeRun{global}
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || name == domain.GlobalHeartbeat {
			continue
		}
		phb, err := r.checklist(ctx, name)
		if err != nil {
			return nil, err
		}
		if _, n := domain.HeartbeatChecklist(phb.Items, phb.Suppressed, nil); n == 0 {
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
	stream := domain.HeartbeatCycleStream(s.scope, slot)
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
	lines, count := domain.HeartbeatChecklist(s.hb.Items, s.hb.Suppressed, s.excluded)
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
func (r *Runner) resume(ctx context.Context, stream string, st domain.HeartbeatCycle) error {
	if st.Completed != nil {
		return nil
	}
	if st.Owner != r.cfg.Owner && r.cfg.Now().Sub(st.Changed) < r.cfg.Stale {
		return nil
	}
	r.cfg.Logger.Info("heartbeat: resuming an unfinished cycle", "stream", stream, "owner", st.Owner)
	if err := r.append(ctx, stream, eventstore.Exact(st.Version), "resume/"+strconv.FormatInt(st.Version, 10),
		domain.HeartbeatCycleResumed{Owner: r.cfg.Owner}); err != nil {
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
	next := domain.NextHeartbeatSlot(now, interval, r.cfg.Location)
	if !r.cfg.Active.Contains(next, r.cfg.Location) {
		start := r.cfg.Active.NextStart(now, r.cfg.Location)
		next = domain.HeartbeatSlot(start, interval, r.cfg.Location)
		if next.Before(start) {
			next = domain.NextHeartbeatSlot(start, interval, r.cfg.Location)
		}
		r.cfg.Logger.Info("heartbeat: quiet hours", "scope", scope, "until", next.In(r.cfg.Location).Format("15:04"),
			"in", next.Sub(now).Round(time.Minute))
	}
	r.cfg.Clock.Set(duework.Item{Kind: Kind, ID: scope, Due: next})
}

func (r *Runner) interval(hb domain.Heartbeat) time.Duration {
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
	next := domain.NextHeartbeatSlot(now, interval, r.cfg.Location)
	if !r.cfg.Active.Contains(next, r.cfg.Location) {
		next = r.cfg.Active.NextStart(now, r.cfg.Location)
	}
	return next, nil
}

// begin claims the slot with the cycle's first event and drives it.
func (r *Runner) begin(ctx context.Context, scope, project string, slot time.Time, lines []string) error {
	start := time.Now()
	r.cfg.Logger.Info("heartbeat: cycle started", "scope", scope, "at", slot.In(r.cfg.Location).Format("15:04"))
	enrichment, err := r.cfg.Context.Enrichment(ctx, r.cfg.Target, project)
	if err != nil {
		return fmt.Errorf("heartbeat %s: enrichment: %w", scope, err)
	}
	stream := domain.HeartbeatCycleStream(scope, slot)
	started := domain.HeartbeatCycleStarted{Scope: scope, Project: project, Slot: slot.UTC(), Items: lines,
		Enrichment: enrichment, Target: r.cfg.Target.String(), Owner: r.cfg.Owner}
	if err := r.append(ctx, stream, eventstore.NoStream, "start", started); err != nil {
		if errors.Is(err, eventstore.ErrConcurrency) {
			return nil // another process runs this slot
		}
		return err
	}
	err = r.drive(ctx, stream)
	r.cfg.Logger.Info("heartbeat: cycle completed", "scope", scope, "took", time.Since(start).Round(time.Millisecond), "err", err)
	return err
}

// drive performs the cycle's next steps until it is complete.
func (r *Runner) drive(ctx context.Context, stream string) error {
	for range 20 {
		st, err := r.load(ctx, stream)
		if err != nil {
			return err
		}
		var step error
		switch st.Next() {
		case domain.HeartbeatStepNone:
			return nil
		case domain.HeartbeatStepClassify:
			step = r.classify(ctx, stream, st)
		case domain.HeartbeatStepCall:
			step = r.call(ctx, stream, st)
		case domain.HeartbeatStepProcess:
			step = r.process(ctx, stream, st)
		case domain.HeartbeatStepAlert:
			step = r.alert(ctx, stream, st)
		case domain.HeartbeatStepComplete:
			outcome := st.Outcome()
			step = r.append(ctx, stream, eventstore.Exact(st.Version), "complete", domain.HeartbeatCycleCompleted{Outcome: outcome})
			if step == nil {
				r.cfg.Logger.Info("heartbeat: cycle outcome", "stream", stream, "outcome", outcome)
			}
		}
		if step != nil && !errors.Is(step, eventstore.ErrConcurrency) {
			return step
		}
	}
	return fmt.Errorf("heartbeat %s: the cycle kept changing under the runner", stream)
}

// classify groups a long checklist by domain with the fast model; a short
// one, or a failed classification, is one group.
func (r *Runner) classify(ctx context.Context, stream string, st domain.HeartbeatCycle) error {
	items := checkItems(st.Started.Items)
	all := []domain.HeartbeatGroup{{Name: "all", Items: st.Started.Items}}
	ev := domain.HeartbeatClassified{Groups: all}
	if len(items) > domain.HeartbeatDirectMax {
		var numbered strings.Builder
		for i, it := range items {
			fmt.Fprintf(&numbered, "%d. %s\n", i+1, it)
		}
		start := time.Now()
		resp, err := r.cfg.Provider.Complete(ctx, providers.Request{
			Prompt: r.cfg.Prompts.HeartbeatClassify(numbered.String()), Model: r.cfg.ModelFast, MaxTurns: 1, WorkDir: r.cfg.WorkDir,
		})
		ev.Usage = resp.CallUsage(time.Since(start))
		switch {
		case err != nil:
			ev.Error = err.Error()
		default:
			ev.Raw = resp.Text
			if groups, perr := domain.ParseHeartbeatGroups(resp.Text, items); perr != nil {
				ev.Error = perr.Error()
			} else {
				ev.Groups = groups
			}
		}
		if ev.Error != "" {
			r.cfg.Logger.Warn("heartbeat: classification failed, one call for all", "stream", stream, "err", ev.Error)
		}
	}
	return r.append(ctx, stream, eventstore.Exact(st.Version), "classify", ev)
}

// checkItems are the checklist's items without headers and comments.
func checkItems(lines []string) []string {
	var out []string
	for _, l := range lines {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			out = append(out, l)
		}
	}
	return out
}

// call claims the pending groups' calls in one append, then calls them in
// parallel (bounded) and records each reply as it comes.
func (r *Runner) call(ctx context.Context, stream string, st domain.HeartbeatCycle) error {
	pending := st.PendingGroups()
	prompts := make([]string, len(pending))
	claims := make([]domain.Payload, len(pending))
	for i, g := range pending {
		prompts[i] = r.prompt(st, st.Classified.Groups[g])
		claims[i] = domain.HeartbeatGroupCalled{Group: g, Model: r.cfg.ModelComplex, Prompt: prompts[i]}
	}
	if err := r.append(ctx, stream, eventstore.Exact(st.Version), "call", claims...); err != nil {
		return err
	}
	system := r.cfg.Context.System(st.Started.Project)
	sem := make(chan struct{}, r.cfg.Parallel)
	var wg sync.WaitGroup
	errs := make([]error, len(pending))
	for i, g := range pending {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			start := time.Now()
			resp, err := r.cfg.Provider.Complete(ctx, providers.Request{
				System: system, Prompt: prompts[i], Model: r.cfg.ModelComplex, WorkDir: r.cfg.WorkDir,
			})
			if err != nil && ctx.Err() != nil {
				errs[i] = ctx.Err() // shutting down: the restart calls it again
				return
			}
			usage := resp.CallUsage(time.Since(start))
			var out domain.Payload = domain.HeartbeatGroupReplied{Group: g, Raw: resp.Text, Usage: usage}
			if err != nil {
				r.cfg.Logger.Warn("heartbeat: group call failed", "stream", stream, "group", g, "err", err)
				out = domain.HeartbeatGroupFailed{Group: g, Error: err.Error(), Usage: usage}
			}
			errs[i] = r.append(ctx, stream, eventstore.Any, fmt.Sprintf("reply/%d", g), out)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// prompt is a group's prompt: enrichment first, so learned rules frame
// the checklist, then the heartbeat template with the group's items.
func (r *Runner) prompt(st domain.HeartbeatCycle, g domain.HeartbeatGroup) string {
	body := r.cfg.Prompts.HeartbeatPrompt(strings.Join(g.Items, "\n"))
	if st.Started.Enrichment == "" {
		return body
	}
	return st.Started.Enrichment + "\n\n" + body
}

// process applies each replied group's markers and evaluates it.
func (r *Runner) process(ctx context.Context, stream string, st domain.HeartbeatCycle) error {
	for _, g := range st.Unprocessed() {
		turn := r.turn(stream, g, st.Started)
		text, applied, err := r.cfg.Markers(ctx, turn, st.Replies[g])
		if err != nil {
			return fmt.Errorf("heartbeat %s: markers of group %d: %w", stream, g, err)
		}
		ok, alert := domain.HeartbeatOK(text)
		if err := r.append(ctx, stream, eventstore.Any, fmt.Sprintf("process/%d", g),
			domain.HeartbeatGroupProcessed{Group: g, Text: alert, OK: ok, Markers: applied}); err != nil {
			return err
		}
	}
	return nil
}

// turn stands for one group of the check-in where markers expect a turn:
// its id keys the markers' effects (applied once), its sender is the
// alert target, its project the cycle's.
func (r *Runner) turn(stream string, g int, st *domain.HeartbeatCycleStarted) *domain.Turn {
	target := r.cfg.Target
	if target.Channel == "" {
		target = Target{Channel: Kind, Chat: "owner"}
	}
	return &domain.Turn{
		ID: fmt.Sprintf("%s-g%d", stream, g),
		Received: &domain.MessageReceived{Channel: target.Channel, SenderID: target.Chat, ChatID: target.Chat,
			Heartbeat: true},
		Context: &domain.ContextBuilt{Project: st.Project},
	}
}

// alert claims the joined alert and sends it to the target.
func (r *Runner) alert(ctx context.Context, stream string, st domain.HeartbeatCycle) error {
	text := st.AlertText()
	if err := r.append(ctx, stream, eventstore.Exact(st.Version), "alert",
		domain.HeartbeatAlertStarted{Text: text, Target: r.cfg.Target.String()}); err != nil {
		return err
	}
	var outcome domain.Payload
	res, err := r.send(ctx, text)
	if err != nil {
		r.cfg.Logger.Warn("heartbeat: alert not delivered", "stream", stream, "target", r.cfg.Target.String(), "err", err)
		outcome = domain.HeartbeatAlertFailed{Error: err.Error()}
	} else {
		outcome = domain.HeartbeatAlertSent{PlatformIDs: res.PlatformIDs}
	}
	return r.append(ctx, stream, eventstore.Any, "alert/outcome", outcome)
}

// ErrNoTarget: no OMEGA_HEARTBEAT_TARGET and no owner to default to.
var ErrNoTarget = errors.New("no heartbeat target configured")

func (r *Runner) send(ctx context.Context, text string) (channels.SendResult, error) {
	if r.cfg.Target.Channel == "" {
		return channels.SendResult{}, ErrNoTarget
	}
	ch, ok := r.cfg.Channels.Channel(r.cfg.Target.Channel)
	if !ok {
		return channels.SendResult{}, fmt.Errorf("%w: %s", channels.ErrNoChannel, r.cfg.Target.Channel)
	}
	return ch.SendText(ctx, r.cfg.Target.Chat, text)
}

// checklist folds the scope's checklist stream.
func (r *Runner) checklist(ctx context.Context, scope string) (domain.Heartbeat, error) {
	var hb domain.Heartbeat
	_, err := eventstore.Fold(ctx, r.cfg.Store, r.cfg.Registry, domain.HeartbeatStream(scope), &hb)
	return hb, err
}

func (r *Runner) load(ctx context.Context, stream string) (domain.HeartbeatCycle, error) {
	var st domain.HeartbeatCycle
	_, err := eventstore.Fold(ctx, r.cfg.Store, r.cfg.Registry, stream, &st)
	return st, err
}

func (r *Runner) append(ctx context.Context, stream string, expected eventstore.ExpectedVersion, key string, ps ...domain.Payload) error {
	md := domain.Metadata{CorrelationID: stream, CausationID: stream + "/" + key}
	evs, err := domain.NewEvents(md, ps...)
	if err != nil {
		return err
	}
	if _, err := r.cfg.Store.Append(ctx, stream, expected, evs...); err != nil {
		return fmt.Errorf("heartbeat %s: record %s: %w", stream, key, err)
	}
	return nil
}
