package handlers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/promptctx"
	"github.com/omega-gateway/omega/domain/sanitize"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/prompts"
	"github.com/omega-gateway/omega/providers"
)

// Provider is the language model the driver asks.
type Provider interface {
	Name() string
	Complete(ctx context.Context, req providers.Request) (providers.Response, error)
}

// ChannelSet finds the channel a turn's replies go to.
type ChannelSet interface {
	Channel(name string) (channels.Channel, bool)
}

// CommandHook answers bot commands without a provider call (the commands
// issue plugs in here).
type CommandHook interface {
	IsCommand(text string) bool
	Answer(ctx context.Context, turn *domain.Turn, profile domain.SenderProfile) (CommandAnswer, error)
}

// CommandAnswer is a command's reply and the turn events it records.
type CommandAnswer struct {
	Command, Reply string
	Events         []domain.Payload
}

// ReplyHook turns the raw provider reply into what the user sees: it
// applies markers as events and strips them (the markers issue plugs in
// here). The raw reply is already recorded when it runs.
type ReplyHook interface {
	// Process handles raw, the provider's reply to the turn (step 0) or
	// to plan step step (1-based).
	Process(ctx context.Context, turn *domain.Turn, raw string, step int) (Processed, error)
}

// Processed is a reply made ready for the user: its text and the turn
// events that record what its markers did.
type Processed struct {
	Text   string
	Events []domain.Payload
}

// Auth decides who may talk to omega: owner channels (terminal, HTTP with
// its token) are trusted; everyone else must be on their channel's
// allowlist, and a channel without one allows nobody.
type Auth struct {
	Allowed map[string][]string // channel -> sender ids
}

// Decide returns whether the message's sender is allowed, and why.
func (a Auth) Decide(m *domain.MessageReceived) (bool, string) {
	if m.Trusted {
		return true, "owner channel " + m.Channel
	}
	list, ok := a.Allowed[m.Channel]
	if !ok || len(list) == 0 {
		return false, fmt.Sprintf("no allowlist configured for channel %s (deny by default)", m.Channel)
	}
	for _, id := range list {
		if id == m.SenderID {
			return true, "allowlisted on " + m.Channel
		}
	}
	return false, fmt.Sprintf("sender %s is not on the %s allowlist", m.SenderID, m.Channel)
}

// DriverConfig tunes the driver.
type DriverConfig struct {
	ModelFast        string
	ModelComplex     string // multi-step plans
	Classify         bool   // classify each message: direct answer or plan
	SkillsDir        string // skill folders, named to the classifier
	Workspace        string
	ConversationIdle time.Duration
	Location         *time.Location
	HistoryLimit     int
	StatusFirst      time.Duration // first "still thinking" nudge (seed: 15 s)
	StatusEvery      time.Duration // later nudges (seed: 120 s)
	TypingEvery      time.Duration // typing indicator refresh (seed: 5 s)
	// ProviderProblem, when set, says why the provider cannot work; turns
	// are answered with an explanation instead of a call.
	ProviderProblem error
}

// Driver runs turns: it folds a turn's stream, decides the single next
// step, performs it and records the outcome, until the turn completes.
// Because every outcome is recorded before the next step starts, a turn
// interrupted at any point resumes from its last event.
type Driver struct {
	Store    eventstore.Store
	Registry *domain.Registry
	Senders  Senders
	Read     ReadModel
	Channels ChannelSet
	Provider Provider
	Prompts  *prompts.Set
	Auth     Auth
	Commands CommandHook
	Replies  ReplyHook
	Config   DriverConfig
	Logger   *slog.Logger
	Now      func() time.Time
}

func (d *Driver) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

// turnState is a turn's stream folded, plus events decided but not yet
// recorded: pure steps accumulate here and are written in one append
// before the next side effect.
type turnState struct {
	domain.Turn
	pending []domain.Payload
}

func (s *turnState) Apply(p domain.Payload, version int64, e domain.Event) {
	s.Turn.Apply(p, version, e.RecordedAt)
}

func (s *turnState) add(ps ...domain.Payload) {
	for _, p := range ps {
		s.Turn.Apply(p, s.Version, time.Time{})
		s.pending = append(s.pending, p)
	}
}

// Run drives a turn to completion.
func (d *Driver) Run(ctx context.Context, turnID string) error {
	st := &turnState{Turn: domain.Turn{ID: turnID}}
	version, err := LoadState(ctx, d.Store, d.Registry, domain.TurnStream(turnID), st)
	if err != nil {
		return err
	}
	st.Version = version
	if st.Received == nil {
		return fmt.Errorf("turn %s has no message", turnID)
	}
	log := d.Logger.With("turn", turnID, "channel", st.Received.Channel, "sender", st.Received.SenderID)
	var profile domain.SenderProfile
	stale := true
	for {
		// Only some steps write to the sender's stream; reload after those.
		if stale {
			if profile, err = d.Senders.Load(ctx, st.Received.Channel, st.Received.SenderID); err != nil {
				return err
			}
		}
		env := domain.TurnEnv{
			// A crash between recording Welcomed and sending the welcome
			// must still send it.
			SenderWelcomed: profile.Welcomed && !(profile.WelcomedTurn == turnID && !st.WelcomeSent),
			IsCommand:      d.Commands != nil && d.Commands.IsCommand(st.Received.Text),
			Classify:       d.Config.Classify,
		}
		step := st.Next(env)
		if step == domain.StepNone {
			return d.flush(ctx, st)
		}
		log.Debug("turn step", "step", step)
		if err := d.perform(ctx, st, step, profile, log); err != nil {
			return fmt.Errorf("turn %s: %s: %w", turnID, step, err)
		}
		stale = d.writesSender(step)
	}
}

// flushBefore reports whether what was decided before a step must be on
// record before the step acts. It must when the step's effect depends on
// those decisions being final: markers (the raw reply they come from), a
// welcome or command (they write elsewhere), plan steps. A provider call
// records its intent (ProviderCalled) together with everything pending
// right before it calls. A reply need not be: if the process dies after
// sending it, the turn resumes before the send and sends again either way.
// A classification whose outcome is lost is simply asked again.
func (d *Driver) flushBefore(step domain.Step) bool {
	switch step {
	case domain.StepWelcome, domain.StepCommand, domain.StepPlanStep, domain.StepPlanProgress:
		return true
	case domain.StepProcessReply:
		return d.Replies != nil
	}
	return false
}

// writesSender reports whether a step may change the sender's stream, so
// that the profile must be read again after it.
func (d *Driver) writesSender(step domain.Step) bool {
	switch step {
	case domain.StepWelcome, domain.StepCommand, domain.StepCallProvider, domain.StepProcessReply,
		domain.StepClassify, domain.StepPlanStep, domain.StepPlanProgress:
		return true
	}
	return false
}

func (d *Driver) perform(ctx context.Context, st *turnState, step domain.Step, profile domain.SenderProfile, log *slog.Logger) error {
	if d.flushBefore(step) {
		if err := d.flush(ctx, st); err != nil {
			return err
		}
	}
	switch step {
	case domain.StepAuthorize:
		if ok, reason := d.Auth.Decide(st.Received); ok {
			st.add(domain.AccessGranted{Reason: reason})
		} else {
			log.Warn("access denied", "reason", reason)
			st.add(domain.AccessDenied{Reason: reason})
		}
	case domain.StepWelcome:
		return d.welcome(ctx, st, profile, log)
	case domain.StepCommand:
		stop := d.typing(ctx, st, log)
		ans, err := d.Commands.Answer(ctx, &st.Turn, profile)
		stop()
		if err != nil {
			return err
		}
		st.add(ans.Events...)
		st.add(domain.CommandAnswered{Command: ans.Command, Reply: ans.Reply})
	case domain.StepBuildContext:
		built, err := d.buildContext(ctx, st, profile)
		if err != nil {
			return err
		}
		st.add(built)
	case domain.StepClassify:
		return d.classify(ctx, st, log)
	case domain.StepPlanStep:
		return d.planStep(ctx, st, profile, log)
	case domain.StepPlanProgress:
		return d.planProgress(ctx, st, profile, log)
	case domain.StepPlanSummary:
		d.planSummary(st, profile)
	case domain.StepCallProvider:
		return d.callProvider(ctx, st, profile, log)
	case domain.StepProcessReply:
		return d.processReply(ctx, st, profile)
	case domain.StepSendReply:
		return d.sendReply(ctx, st, profile, log)
	case domain.StepCleanup:
		st.add(domain.AttachmentsRemoved{Paths: d.removeAttachments(st, log)})
	case domain.StepComplete:
		st.add(domain.TurnCompleted{Status: st.Outcome(), DurationMs: d.now().Sub(st.Received.ReceivedAt).Milliseconds()})
		if err := d.flush(ctx, st); err != nil {
			return err
		}
		log.Info("turn completed", "status", st.Outcome())
	}
	return nil
}

// flush records the pending events with the version the driver read.
func (d *Driver) flush(ctx context.Context, st *turnState) error {
	if len(st.pending) == 0 {
		return nil
	}
	md := domain.Metadata{CorrelationID: st.ID, Channel: st.Received.Channel, Sender: st.Received.SenderID}
	evs, err := domain.NewEvents(md, st.pending...)
	if err != nil {
		return err
	}
	res, err := d.Store.Append(ctx, domain.TurnStream(st.ID), eventstore.Exact(st.Version), evs...)
	if err != nil {
		return fmt.Errorf("record %d event(s): %w", len(evs), err)
	}
	st.Version, st.pending = res.ToVersion, nil
	return nil
}

// record flushes the pending events plus ps.
func (d *Driver) record(ctx context.Context, st *turnState, ps ...domain.Payload) error {
	st.add(ps...)
	return d.flush(ctx, st)
}

func (d *Driver) language(st *turnState, profile domain.SenderProfile) string {
	if profile.Language != "" {
		return i18n.OrDefault(profile.Language)
	}
	return i18n.Detect(st.Received.Text)
}

func (d *Driver) welcome(ctx context.Context, st *turnState, profile domain.SenderProfile, log *slog.Logger) error {
	lang := i18n.Detect(st.Received.Text)
	m := st.Received
	md := domain.Metadata{CorrelationID: st.ID, CausationID: st.ID, Channel: m.Channel, Sender: m.SenderID}
	p, err := d.Senders.Decide(ctx, m.Channel, m.SenderID, md, func(p domain.SenderProfile) ([]domain.Payload, error) {
		return p.Welcome(m.SenderName, lang, st.ID), nil
	})
	if err != nil {
		return err
	}
	lang = i18n.OrDefault(p.Language)
	text := d.Prompts.Welcome(lang)
	sent := domain.WelcomeSent{Language: lang, Text: text}
	if _, err := d.send(ctx, st, text); err != nil {
		log.Warn("welcome not delivered", "err", err)
		sent.Error = err.Error()
	}
	return d.record(ctx, st, sent)
}

func (d *Driver) buildContext(ctx context.Context, st *turnState, profile domain.SenderProfile) (domain.ContextBuilt, error) {
	m := st.Received
	lang := d.language(st, profile)
	project := profile.ActiveProject
	sender := m.Channel + "-" + m.SenderID
	now := d.now()

	// A conversation continues while it is active; after the idle time the
	// next message starts a new one. The choice is recorded, so a replay
	// never depends on the configuration of the day.
	conv := st.ID
	var history []domain.HistoryMessage
	if id, last, ok, err := d.Read.LastConversation(ctx, sender, project); err != nil {
		return domain.ContextBuilt{}, err
	} else if ok && now.Sub(last) < d.Config.ConversationIdle {
		conv = id
		if history, err = d.Read.History(ctx, id, d.Config.HistoryLimit); err != nil {
			return domain.ContextBuilt{}, err
		}
	}

	clean := sanitize.Clean(m.Text)
	message := clean.Text
	if refs := attachmentLines(m.Attachments); refs != "" {
		message = refs + "\n" + message
	}
	session := profile.Sessions[project]
	hint := ""
	if ch, ok := d.Channels.Channel(m.Channel); ok {
		if h, ok := ch.(channels.FormatHinter); ok {
			hint = h.FormatHint()
		}
	}
	tasks, err := d.pendingTasks(ctx, sender)
	if err != nil {
		return domain.ContextBuilt{}, err
	}
	lessons, outcomes, err := d.learning(ctx, sender, project)
	if err != nil {
		return domain.ContextBuilt{}, err
	}
	turns := make([]promptctx.Turn, len(history))
	for i, h := range history {
		turns[i] = promptctx.Turn{Role: h.Role, Text: h.Text}
	}
	out := promptctx.Build(promptctx.Input{
		Prompts:        d.Prompts.Sections(),
		FirstInSession: session == "",
		Message:        message,
		SenderName:     m.SenderName,
		Language:       lang,
		Personality:    profile.Personality,
		ActiveProject:  project,
		Now:            now,
		Location:       d.Config.Location,
		PlatformHint:   hint,
		IsGroup:        m.IsGroup,
		Facts:          profile.SortedFacts(),
		History:        turns,
		PendingTasks:   tasks,
		Lessons:        lessons,
		Outcomes:       outcomes,
	})
	built := domain.ContextBuilt{
		ConversationID:   conv,
		Project:          project,
		Language:         lang,
		Model:            d.Config.ModelFast,
		SessionID:        session,
		Continuation:     session != "",
		SectionsUsed:     out.SectionsUsed,
		System:           out.System,
		Prompt:           message,
		Message:          message,
		History:          history,
		FactsCount:       len(profile.Facts),
		SanitizeWarnings: clean.Warnings,
	}
	if session != "" {
		built.Prompt, built.SectionsUsed = out.Continuation, out.ContinuationSections
	}
	return built, nil
}

// pendingTasks lists the sender's scheduled tasks for the prompt.
func (d *Driver) pendingTasks(ctx context.Context, sender string) ([]promptctx.Task, error) {
	rows, err := d.Read.SenderTasks(ctx, sender, true)
	if err != nil {
		return nil, err
	}
	out := make([]promptctx.Task, len(rows))
	for i, r := range rows {
		out[i] = promptctx.Task{ID: r.ID, Description: r.Description, Due: r.Due, Repeat: r.Repeat, Action: r.Kind == "action"}
	}
	return out, nil
}

// maxLearning bounds how many lessons and outcomes reach the prompt.
const maxLearning = 20

// learning returns what the sender's turns taught, scoped to the active
// project: a lesson learned in one project does not steer another.
func (d *Driver) learning(ctx context.Context, sender, project string) (lessons, outcomes []string, err error) {
	var l domain.Learning
	if _, err := LoadState(ctx, d.Store, d.Registry, domain.LearningStream(sender), timeFolder{&l}); err != nil {
		return nil, nil, err
	}
	for _, x := range l.Lessons {
		if x.Project == project {
			lessons = append(lessons, fmt.Sprintf("[%s] %s", x.Domain, x.Rule))
		}
	}
	for _, r := range l.Rewards {
		if r.Project == project {
			outcomes = append(outcomes, fmt.Sprintf("(%+d) [%s] %s", r.Score, r.Domain, r.Lesson))
		}
	}
	for _, o := range l.Outcomes {
		if o.Project == project {
			outcomes = append(outcomes, o.Outcome)
		}
	}
	return lastN(lessons, maxLearning), lastN(outcomes, maxLearning), nil
}

func lastN(xs []string, n int) []string {
	if len(xs) > n {
		return xs[len(xs)-n:]
	}
	return xs
}

func attachmentLines(as []domain.AttachmentRef) string {
	var lines []string
	for _, a := range as {
		kind := "file"
		if strings.HasPrefix(a.MIME, "image/") {
			kind = "image"
		}
		lines = append(lines, fmt.Sprintf("[Attached %s: %s]", kind, a.Path))
	}
	return strings.Join(lines, "\n")
}

func (d *Driver) callProvider(ctx context.Context, st *turnState, profile domain.SenderProfile, log *slog.Logger) error {
	c := st.Context
	if d.Config.ProviderProblem != nil {
		return d.record(ctx, st, domain.ProviderFailed{Provider: d.providerName(), Class: providers.Unavailable.String(), Message: d.Config.ProviderProblem.Error()})
	}
	resume := c.SessionID != "" && st.Failure == nil
	req := providers.Request{Model: c.Model, WorkDir: d.Config.Workspace}
	if resume {
		req.SessionID, req.Prompt = c.SessionID, c.Prompt
	} else {
		req.System, req.Prompt = c.System, c.Message
		for _, h := range c.History {
			req.History = append(req.History, providers.Message{Role: h.Role, Content: h.Text})
		}
	}
	called := domain.ProviderCalled{Provider: d.providerName(), Model: c.Model, SessionID: req.SessionID, Attempt: st.Calls + 1, FullContext: !resume && c.SessionID != ""}
	if err := d.record(ctx, st, called); err != nil {
		return err
	}

	stopTyping := d.typing(ctx, st, log)
	stopStatus := d.statusUpdates(ctx, st, profile, log)
	start := d.now()
	resp, err := d.Provider.Complete(ctx, req)
	statusCount := stopStatus()
	stopTyping()
	elapsed := d.now().Sub(start)
	if ctx.Err() != nil {
		// Shutting down: leave the turn as it is; it resumes at this call.
		return ctx.Err()
	}
	if err != nil {
		class := providers.ClassOf(err)
		failed := domain.ProviderFailed{Provider: d.providerName(), Class: class.String(), Message: err.Error(), DurationMs: elapsed.Milliseconds(), StatusMessages: statusCount}
		if resume && class != providers.Unavailable {
			// The session may be gone or broken: forget it and try once
			// more with the whole context.
			failed.RetryFullContext = true
			if err := d.clearSession(ctx, st, c.Project, "resume failed: "+class.String()); err != nil {
				return err
			}
		}
		log.Warn("provider call failed", "class", class, "err", err, "retry_full_context", failed.RetryFullContext)
		return d.record(ctx, st, failed)
	}
	replied := domain.ProviderReplied{
		Provider: d.providerName(), Model: firstNonEmpty(resp.Model, c.Model), Text: resp.Text, SessionID: resp.SessionID,
		DurationMs: elapsed.Milliseconds(), InputTokens: resp.InputTokens, OutputTokens: resp.OutputTokens,
		NumTurns: resp.NumTurns, Resumes: resp.Resumes, PromptBytes: len(req.System) + len(req.Prompt), ReplyBytes: len(resp.Text),
		StatusMessages: statusCount,
	}
	if resp.SessionID != "" {
		m := st.Received
		md := domain.Metadata{CorrelationID: st.ID, Channel: m.Channel, Sender: m.SenderID, Project: c.Project}
		if _, err := d.Senders.Decide(ctx, m.Channel, m.SenderID, md, func(p domain.SenderProfile) ([]domain.Payload, error) {
			return p.StartSession(c.Project, resp.SessionID, d.providerName()), nil
		}); err != nil {
			return err
		}
	}
	st.add(replied)
	if d.Replies != nil {
		// Markers act on other streams: the raw reply must be on record first.
		return d.flush(ctx, st)
	}
	return nil
}

func (d *Driver) clearSession(ctx context.Context, st *turnState, project, reason string) error {
	m := st.Received
	md := domain.Metadata{CorrelationID: st.ID, Channel: m.Channel, Sender: m.SenderID, Project: project}
	_, err := d.Senders.Decide(ctx, m.Channel, m.SenderID, md, func(p domain.SenderProfile) ([]domain.Payload, error) {
		return p.ClearSession(project, reason), nil
	})
	return err
}

func (d *Driver) providerName() string {
	if d.Provider == nil {
		return "none"
	}
	return d.Provider.Name()
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (d *Driver) processReply(ctx context.Context, st *turnState, profile domain.SenderProfile) error {
	raw := st.Reply.Text
	if st.Received.IsGroup && strings.TrimSpace(raw) == "SILENT" {
		st.add(domain.TurnSuppressed{Reason: "SILENT"})
		return nil
	}
	out := Processed{Text: raw}
	if d.Replies != nil {
		var err error
		if out, err = d.Replies.Process(ctx, &st.Turn, raw, 0); err != nil {
			return err
		}
	}
	st.add(out.Events...)
	st.add(domain.ReplyReady{Text: out.Text})
	return nil
}

// replyText is what the send step delivers for the turn's outcome.
func (d *Driver) replyText(st *turnState, profile domain.SenderProfile) string {
	lang := d.language(st, profile)
	switch st.ReplyKind() {
	case "deny":
		return i18n.Text(lang, i18n.AccessDenied)
	case "command":
		return st.Command.Reply
	case "error":
		if st.Ready != nil {
			return st.Ready.Text // a stopped plan explains itself
		}
		if st.Failure != nil && st.Failure.Class == providers.Unavailable.String() {
			return i18n.Text(lang, i18n.ProviderUnavailable)
		}
		return i18n.Text(lang, errorKey(st.Failure))
	}
	return st.Ready.Text
}

func errorKey(f *domain.ProviderFailed) i18n.Key {
	if f == nil {
		return i18n.ErrUnknown
	}
	return errorClassKey(f.Class)
}

func errorClassKey(class string) i18n.Key {
	switch class {
	case providers.RateLimited.String():
		return i18n.ErrRateLimited
	case providers.Auth.String():
		return i18n.ErrAuth
	case providers.Server.String():
		return i18n.ErrServer
	case providers.Timeout.String():
		return i18n.ErrTimeout
	case providers.BadRequest.String():
		return i18n.ErrBadRequest
	case providers.Malformed.String():
		return i18n.ErrMalformed
	}
	return i18n.ErrUnknown
}

func (d *Driver) sendReply(ctx context.Context, st *turnState, profile domain.SenderProfile, log *slog.Logger) error {
	kind, text := st.ReplyKind(), d.replyText(st, profile)
	if strings.TrimSpace(text) == "" {
		// Nothing left to say (e.g. the reply was only markers).
		st.add(domain.ReplySent{Kind: kind})
		return nil
	}
	res, err := d.send(ctx, st, text)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		log.Warn("reply not delivered", "kind", kind, "err", err)
		st.add(domain.ReplyFailed{Kind: kind, Class: deliveryClass(err), Error: err.Error()})
		return nil
	}
	st.add(domain.ReplySent{Kind: kind, Text: text, Chunks: res.Chunks, PlatformIDs: res.PlatformIDs, PlainText: res.PlainText})
	return nil
}

func deliveryClass(err error) string {
	switch {
	case errors.Is(err, channels.ErrBlocked):
		return "blocked"
	case errors.Is(err, channels.ErrRejected):
		return "rejected"
	case errors.Is(err, channels.ErrNotConnected):
		return "not_connected"
	case errors.Is(err, errNoChannel):
		return "no_channel"
	}
	return "error"
}

var errNoChannel = errors.New("channel not available in this process")

// send delivers text to the turn's chat, retrying transient failures a few
// times; refusals (blocked, rejected) are final at once.
func (d *Driver) send(ctx context.Context, st *turnState, text string) (channels.SendResult, error) {
	ch, ok := d.Channels.Channel(st.Received.Channel)
	if !ok {
		return channels.SendResult{}, fmt.Errorf("%w: %s", errNoChannel, st.Received.Channel)
	}
	var err error
	wait := 500 * time.Millisecond
	for attempt := 0; attempt < 4; attempt++ {
		var res channels.SendResult
		res, err = ch.SendText(ctx, st.Received.ChatID, text)
		if err == nil {
			return res, nil
		}
		if errors.Is(err, channels.ErrBlocked) || errors.Is(err, channels.ErrRejected) || errors.Is(err, channels.ErrNotConnected) {
			return res, err
		}
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(wait):
		}
		wait *= 2
	}
	return channels.SendResult{}, err
}

// typing keeps the platform's typing indicator on until stop is called.
func (d *Driver) typing(ctx context.Context, st *turnState, log *slog.Logger) (stop func()) {
	ch, ok := d.Channels.Channel(st.Received.Channel)
	every := d.Config.TypingEvery
	if !ok || every <= 0 {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			if err := ch.SendTyping(ctx, st.Received.ChatID); err != nil && ctx.Err() == nil {
				log.Debug("typing indicator failed", "err", err)
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() { cancel(); <-done }
}

// statusUpdates sends localized "still working" messages while a provider
// call runs long: none if it answers before StatusFirst. stop ends them and
// returns how many were sent.
func (d *Driver) statusUpdates(ctx context.Context, st *turnState, profile domain.SenderProfile, log *slog.Logger) (stop func() int) {
	if d.Config.StatusFirst <= 0 {
		return func() int { return 0 }
	}
	first, still := i18n.StatusMessages(d.language(st, profile))
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	n := 0
	go func() {
		defer close(done)
		wait, text := d.Config.StatusFirst, first
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			if _, err := d.send(ctx, st, text); err != nil {
				if ctx.Err() == nil {
					log.Warn("status message not delivered", "err", err)
				}
			} else {
				n++
			}
			wait, text = d.Config.StatusEvery, still
		}
	}()
	return func() int {
		cancel()
		<-done
		return n
	}
}

func (d *Driver) removeAttachments(st *turnState, log *slog.Logger) []string {
	var removed []string
	for _, a := range st.Received.Attachments {
		if err := os.Remove(a.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
			log.Warn("could not remove attachment", "path", a.Path, "err", err)
			continue
		}
		removed = append(removed, a.Path)
	}
	if len(st.Received.Attachments) > 0 {
		_ = os.Remove(filepath.Dir(st.Received.Attachments[0].Path)) // the turn's inbox folder, if now empty
	}
	return removed
}

// Ack tells a sender whose previous message is still being worked on that
// this one is queued, once per turn.
func (d *Driver) Ack(ctx context.Context, turnID string) error {
	st := &turnState{Turn: domain.Turn{ID: turnID}}
	version, err := LoadState(ctx, d.Store, d.Registry, domain.TurnStream(turnID), st)
	if err != nil {
		return err
	}
	st.Version = version
	if st.Received == nil || st.Acked || st.Completed != nil || st.Granted || st.Denied {
		return nil
	}
	if ok, _ := d.Auth.Decide(st.Received); !ok {
		return nil // strangers are answered by their own turn, not acknowledged
	}
	profile, err := d.Senders.Load(ctx, st.Received.Channel, st.Received.SenderID)
	if err != nil {
		return err
	}
	text := i18n.Text(d.language(st, profile), i18n.BusyAck)
	if _, err := d.send(ctx, st, text); err != nil {
		d.Logger.Warn("busy acknowledgement not delivered", "turn", turnID, "err", err)
	}
	err = d.record(ctx, st, domain.AckSent{Text: text})
	if errors.Is(err, eventstore.ErrConcurrency) {
		return nil // the turn started meanwhile
	}
	return err
}
