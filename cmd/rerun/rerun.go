// Package rerun re-runs a recorded turn in a scratch store: the turn's
// message and its sender's state as of the turn's start are copied into a
// temporary SQLite store, the real driver runs the turn there with the
// provider's recorded replies (or, live, the configured provider), and the
// events it records are compared with the recorded ones, ids and times
// aside. Nothing is written to the live store or sent on any channel.
package rerun

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/omega-gateway/omega/api"
	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/app/config"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/prompts"
)

// Source is the live log the turn is read from; it is only read.
type Source interface {
	Load(ctx context.Context, stream string, fromVersion int64) ([]domain.Event, error)
	ReadAll(ctx context.Context, after int64, limit int) ([]domain.Event, error)
}

// Options tune a re-run.
type Options struct {
	// Live calls the configured provider instead of replaying the
	// recorded replies.
	Live bool
	// PromptsDir replaces the prompt files ($OMEGA_DATA_DIR/prompts by
	// default).
	PromptsDir string
	// Model replaces both configured models.
	Model string
	// Timeout bounds the scratch run (default 2m).
	Timeout time.Duration
	Logger  *slog.Logger

	// capabilities are what the recorded turn's process could do.
	capabilities *prompts.Capabilities
	// replay are the turn's recorded decision inputs and effect outcomes.
	replay *app.Replay
}

// Result is one re-run.
type Result struct {
	TurnID    string
	Identical bool
	// Diff is a unified diff of the recorded events (---) and the
	// re-run's (+++), one line per field or line of text.
	Diff []string
	// Changed names what differs: prompt, model, route, reply, markers,
	// access, effects.
	Changed []string
	// Note says what the re-run could not take from the log, if anything.
	Note string
}

// Run re-runs one turn.
func Run(ctx context.Context, src Source, reg *domain.Registry, cfg config.Config, turnID string, o Options) (Result, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	res := Result{TurnID: turnID}
	recorded, err := src.Load(ctx, domain.TurnStream(turnID), 1)
	if err != nil {
		return res, fmt.Errorf("load turn %s: %w", turnID, err)
	}
	if len(recorded) == 0 || recorded[0].Type != "MessageReceived" {
		return res, fmt.Errorf("no turn %s", turnID)
	}
	decoded := make([]domain.Payload, len(recorded))
	for i, e := range recorded {
		if decoded[i], err = reg.Decode(e); err != nil {
			return res, fmt.Errorf("decode %s of turn %s: %w", e.Type, turnID, err)
		}
	}
	msg := decoded[0].(domain.MessageReceived)
	state, err := senderState(ctx, src, recorded, msg)
	if err != nil {
		return res, err
	}
	built := recordedContext(decoded)
	defs, err := projectDefinitions(ctx, src, built.ProjectsVersion)
	if err != nil {
		return res, err
	}
	state = append(state, defs...)
	o.capabilities = recordedCapabilities(built)
	if o.replay, res.Note, err = replayOf(ctx, src, reg, cfg, turnID, decoded, msg); err != nil {
		return res, err
	}

	scratch, err := os.MkdirTemp("", "omega-rerun-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(scratch)
	if err := copyPrompts(cmpOr(o.PromptsDir, filepath.Join(cfg.DataDir, "prompts")), filepath.Join(scratch, "prompts")); err != nil {
		return res, err
	}
	scfg := withInputs(cfg, o.replay.Inputs, res.Note == "")
	scfg.DatabaseURL, scfg.DataDir, scfg.Workspace, scfg.HTTPAddr = "", scratch, filepath.Join(scratch, "workspace"), ""
	if o.Model != "" {
		scfg.Provider.ModelFast, scfg.Provider.ModelComplex = o.Model, o.Model
	}
	produced, err := runScratch(ctx, src, scfg, o, state, recorded, decoded, msg)
	if err != nil {
		return res, err
	}
	if recorded, err = withTexts(ctx, src, reg, recorded); err != nil {
		return res, err
	}
	res.Diff, res.Changed = compare(normalize(recorded), normalize(produced))
	res.Identical = len(res.Diff) == 0
	return res, nil
}

// recordedCapabilities are what the turn's process could do (nil when
// the turn recorded none).
func recordedCapabilities(built domain.ContextBuilt) *prompts.Capabilities {
	if len(built.Capabilities) == 0 {
		return nil
	}
	caps := prompts.ParseCapabilities(built.Capabilities)
	return &caps
}

// replayOf gathers what the turn took from the world: its decision
// inputs and the outcomes of its owner alerts. (A pairing code it offered
// is in the copied pairing stream: the offer is recorded before the
// turn's first step.)
func replayOf(ctx context.Context, src Source, reg *domain.Registry, cfg config.Config, turnID string, decoded []domain.Payload, msg domain.MessageReceived) (*app.Replay, string, error) {
	inputs, note, err := recordedInputs(ctx, src, reg, cfg, decoded, msg)
	if err != nil {
		return nil, "", err
	}
	owner, err := ownerAlerts(ctx, src, reg, turnID)
	if err != nil {
		return nil, "", err
	}
	return &app.Replay{Inputs: inputs, Owner: owner}, note, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// senderState returns the events that make up the sender's state as the
// turn started (before the turn's first step): the sender's profile
// stream and the sender's earlier turns and summaries, and the skills, in
// log order.
func senderState(ctx context.Context, src Source, turn []domain.Event, msg domain.MessageReceived) ([]domain.Event, error) {
	cutoff := turn[0].ID
	if len(turn) > 1 {
		cutoff = turn[1].ID
	}
	profile := domain.SenderStream(msg.Channel, msg.SenderID)
	later := map[string]bool{} // turns that arrived after this one
	var out []domain.Event
	links := &linkedProfile{}
	for after := int64(0); ; {
		evs, err := src.ReadAll(ctx, after, 1000)
		if err != nil {
			return nil, fmt.Errorf("read the log: %w", err)
		}
		if len(evs) == 0 {
			return nil, errors.New("the turn's start is not in the log")
		}
		for _, e := range evs {
			if e.ID == cutoff {
				return links.merge(out, msg), nil
			}
			if e.StreamID == turn[0].StreamID {
				continue
			}
			links.see(e)
			if !copied(e, profile, msg) {
				continue
			}
			if e.Type == "MessageReceived" && e.Position > turn[0].Position {
				later[e.StreamID] = true
			}
			if !later[e.StreamID] {
				out = append(out, e)
			}
		}
		after = evs[len(evs)-1].Position
	}
}

// copied reports whether an event before the turn is part of the state a
// re-run copies: the sender's own (see belongs), and the skills with
// their lessons as they were.
func copied(e domain.Event, profile string, msg domain.MessageReceived) bool {
	return isSkillStream(e.StreamID) || belongs(e, profile, msg)
}

func isSkillStream(id string) bool {
	return id == domain.SkillsStream || strings.HasPrefix(id, domain.SkillStream(""))
}

// recordedContext is the turn's recorded context (zero when it built none).
func recordedContext(decoded []domain.Payload) domain.ContextBuilt {
	for _, p := range decoded {
		if c, ok := p.(domain.ContextBuilt); ok {
			return c
		}
	}
	return domain.ContextBuilt{}
}

// projectDefinitions are the project definitions the turn's context read:
// the projects stream up to the version it recorded.
func projectDefinitions(ctx context.Context, src Source, version int64) ([]domain.Event, error) {
	if version <= 0 {
		return nil, nil
	}
	evs, err := src.Load(ctx, domain.ProjectsStream, 1)
	if err != nil {
		return nil, fmt.Errorf("load the project definitions: %w", err)
	}
	if int64(len(evs)) < version {
		return nil, fmt.Errorf("the projects stream has %d events, the turn read %d", len(evs), version)
	}
	return evs[:version], nil
}

// belongs reports whether an event is part of the sender's state: their
// profile, what they caused, and who may talk (pairings) and whose
// profile a sender uses (identity links), decided on those streams as a
// whole. Tasks stay out: in the scratch their due times would fire now,
// beside the turn.
func belongs(e domain.Event, profile string, msg domain.MessageReceived) bool {
	if strings.HasPrefix(e.StreamID, "task-") {
		return false
	}
	global := e.StreamID == domain.SenderPairingStream || e.StreamID == domain.IdentityStream
	return global || e.StreamID == profile || (e.Metadata.Channel == msg.Channel && e.Metadata.Sender == msg.SenderID)
}

// linkedProfile keeps the profile streams and the identity links seen
// before a turn, so that a linked sender's re-run starts from the
// canonical identity's profile, as the turn did.
type linkedProfile struct {
	ids      domain.Identities
	registry *domain.Registry
	profiles map[string][]domain.Event
	order    map[int64]int // position -> delivery order (positions are not that order on PostgreSQL)
}

func (l *linkedProfile) see(e domain.Event) {
	if l.order == nil {
		l.order = map[int64]int{}
	}
	l.order[e.Position] = len(l.order)
	switch {
	case e.StreamID == domain.IdentityStream:
		if l.registry == nil {
			l.registry = app.NewRegistry()
		}
		if p, err := l.registry.Decode(e); err == nil {
			l.ids.Apply(p, e.Version, e.RecordedAt)
		}
	case strings.HasPrefix(e.StreamID, "sender-"):
		if l.profiles == nil {
			l.profiles = map[string][]domain.Event{}
		}
		l.profiles[e.StreamID] = append(l.profiles[e.StreamID], e)
	}
}

// merge adds the canonical profile's events to out (in log order) when
// the sender was linked to another identity.
func (l *linkedProfile) merge(out []domain.Event, msg domain.MessageReceived) []domain.Event {
	canonical := l.ids.Resolve(msg.Sender()).Stream()
	if canonical == msg.Sender().Stream() {
		return out
	}
	have := map[int64]bool{}
	for _, e := range out {
		have[e.Position] = true
	}
	for _, e := range l.profiles[canonical] {
		if !have[e.Position] {
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, func(a, b domain.Event) int { return cmp.Compare(l.order[a.Position], l.order[b.Position]) })
	return out
}

// copyPrompts copies the prompt overrides of dir (if any) into to.
func copyPrompts(dir, to string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read prompts %s: %w", dir, err)
	}
	if err := os.MkdirAll(to, 0o700); err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return fmt.Errorf("read prompt %s: %w", e.Name(), err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// hints are the channels' format hints, which the system prompt quotes:
// the HTTP API's and the configured registry's channels'.
func hints(cfg config.Config) map[string]string {
	h := map[string]string{api.Name: (&api.Server{}).FormatHint()}
	for _, d := range cfg.Descriptors() {
		h[d.Name] = d.Hint
	}
	return h
}

// runScratch runs the turn in a scratch store and returns its events.
func runScratch(ctx context.Context, src Source, cfg config.Config, o Options, state, recorded []domain.Event, decoded []domain.Payload, msg domain.MessageReceived) ([]domain.Event, error) {
	ctx, cancel := context.WithTimeout(ctx, cmpDur(o.Timeout, 2*time.Minute))
	defer cancel()
	a, err := app.Open(ctx, cfg, o.Logger, app.OpenOptions{})
	if err != nil {
		return nil, fmt.Errorf("open the scratch store: %w", err)
	}
	defer a.Close()
	for _, e := range append(state, recorded[0]) {
		ne := domain.NewEvent{ID: e.ID, Type: e.Type, Data: e.Data, Metadata: e.Metadata}
		if _, err := a.Store.Append(ctx, e.StreamID, eventstore.Any, ne); err != nil {
			return nil, fmt.Errorf("copy %s of %s: %w", e.Type, e.StreamID, err)
		}
	}
	if err := copyTexts(ctx, src, a.Registry, a.Store, state); err != nil {
		return nil, err
	}
	ch := &recorder{name: msg.Channel, hint: hints(cfg)[msg.Channel], photos: photoOutcomes(decoded), images: watchedImages(decoded)}
	for _, p := range decoded {
		if s, ok := p.(domain.ReplySent); ok {
			ch.chunks = append(ch.chunks, s.Chunks)
		}
	}
	// The turn runs on the recorded clock: its idle, due-time and pairing
	// decisions are the ones it made then.
	realStart, start := time.Now(), recorded[len(recorded)-1].RecordedAt
	if len(recorded) > 1 {
		start = recorded[1].RecordedAt
	}
	now := func() time.Time { return start.Add(time.Since(realStart)) }
	replay := *o.replay
	replay.Now = now
	// The recorded roles are the projects; the scratch has no folder.
	// The summarizer runs on the real clock, to which the copied
	// conversations look idle: closing them would change the turn's
	// context, so its calls wait until the run ends and record nothing.
	opts := app.RuntimeOptions{Channels: []channels.Channel{ch}, FrozenProjects: true, Capabilities: o.capabilities, Replay: &replay,
		Images: recordedImages(decoded, o.Live), SummaryProvider: waitingProvider{}}
	if opts.Provider, err = scratchProvider(cfg, o, decoded); err != nil {
		return nil, err
	}
	rt, err := a.NewRuntime(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("scratch runtime: %w", err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- rt.Run(runCtx) }()
	evs, err := waitCompleted(ctx, a.Store, recorded[0].StreamID)
	stop()
	if runErr := <-done; err == nil && runErr != nil && !errors.Is(runErr, context.Canceled) {
		err = runErr
	}
	if err != nil {
		return evs, err
	}
	return withTexts(ctx, a.Store, a.Registry, evs)
}

func cmpDur(a, b time.Duration) time.Duration {
	if a > 0 {
		return a
	}
	return b
}

// providerName is the recorded provider's name, so events that name it
// compare equal.
func providerName(decoded []domain.Payload, cfg config.Config) string {
	for _, p := range decoded {
		switch ev := p.(type) {
		case domain.ProviderCalled:
			return ev.Provider
		case domain.ProviderReplied:
			return ev.Provider
		}
	}
	return cfg.Provider.Provider
}

func waitCompleted(ctx context.Context, s eventstore.Store, stream string) ([]domain.Event, error) {
	for {
		evs, err := s.Load(ctx, stream, 1)
		if err != nil {
			return nil, err
		}
		if n := len(evs); n > 0 && evs[n-1].Type == "TurnCompleted" {
			return evs, nil
		}
		select {
		case <-ctx.Done():
			return evs, fmt.Errorf("the re-run did not complete: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

var (
	uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	// volatile are fields that differ between any two runs: times,
	// durations, platform message ids.
	volatile = map[string]bool{"duration_ms": true, "received_at": true, "platform_ids": true, "fired_at": true,
		"dir": true} // the scratch run's workspace
	// clocked are events whose presence depends on how long the turn took
	// (an acknowledgement is sent only when the answer is slow), not on
	// any decision the turn made. A streamed reply's start says how the
	// reply showed, not what it was: re-runs compare the final events.
	clocked = map[string]bool{domain.AckSent{}.EventType(): true, domain.ReplyStreamStarted{}.EventType(): true}
	// unrecordedEmpty are events the driver no longer records when they
	// would say nothing (an empty finding of workspace images), so an
	// older turn's empty one compares equal to its absence.
	unrecordedEmpty = map[string]bool{domain.WorkspaceImagesFound{}.EventType(): true}
)

// normalize renders each event as one comparable line: its type and its
// data without volatile fields, ids replaced. Clocked events are left out.
func normalize(evs []domain.Event) []string {
	out := make([]string, 0, len(evs))
	var sent domain.SentTexts
	for _, e := range evs {
		if clocked[e.Type] || unrecordedEmpty[e.Type] && string(e.Data) == "{}" {
			continue
		}
		var data map[string]any
		if err := json.Unmarshal(e.Data, &data); err != nil {
			out = append(out, e.Type+" "+string(e.Data))
			continue
		}
		withSentText(&sent, e, data)
		strip(data)
		b, _ := json.Marshal(data) // maps marshal with sorted keys
		out = append(out, e.Type+" "+uuidRE.ReplaceAllString(string(b), "<id>"))
	}
	return out
}

// withSentText gives a ReplySent the text it left to the ReplyReady
// before it, so that a turn recorded before the text was left out
// compares equal to its re-run.
func withSentText(sent *domain.SentTexts, e domain.Event, data map[string]any) {
	var p domain.Payload
	switch e.Type {
	case domain.ReplyReady{}.EventType():
		var r domain.ReplyReady
		_ = json.Unmarshal(e.Data, &r) // data decoded already
		p = r
	case domain.ReplySent{}.EventType():
		var r domain.ReplySent
		_ = json.Unmarshal(e.Data, &r)
		p = r
	default:
		return
	}
	if r, ok := sent.Fill(p).(domain.ReplySent); ok && r.Text != "" {
		data["text"] = r.Text
	}
}

func strip(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, val := range t {
			if volatile[k] {
				delete(t, k)
				continue
			}
			strip(val)
		}
	case []any:
		for _, val := range t {
			strip(val)
		}
	}
}
