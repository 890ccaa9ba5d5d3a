// Package pipeline drives a turn from the message to the reply: it folds
// the turn's stream, decides the single next step (access, commands,
// context, plan, provider call, markers, send), performs it and records
// the outcome, so a turn interrupted anywhere resumes from its last event.
package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/markers"
	"github.com/omega-gateway/omega/domain/promptctx"
	"github.com/omega-gateway/omega/domain/sanitize"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/handlers/promptstore"
	"github.com/omega-gateway/omega/handlers/skills"
	"github.com/omega-gateway/omega/internal/redact"
	"github.com/omega-gateway/omega/internal/wait"
	"github.com/omega-gateway/omega/projections"
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

// ReplyActs is optionally implemented by a ReplyHook: Acts reports
// whether processing raw may write to streams other than the turn's (it
// holds markers). A hook without it is assumed to act on every reply.
type ReplyActs interface {
	Acts(raw string) bool
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
	if _, listed := a.Allowed[m.Channel]; m.Task != nil && !listed {
		// A scheduled action from an owner channel (no allowlist there);
		// on other channels its sender must still be allowed.
		return true, "scheduled action on owner channel " + m.Channel
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

// PairingGate admits senders the owner approved and offers other unknown
// senders a pairing code instead of a plain denial (the access package).
type PairingGate interface {
	// Applies reports whether an unknown sender of m may pair.
	Applies(m *domain.MessageReceived) bool
	Approved(ctx context.Context, m *domain.MessageReceived) (bool, error)
	// Offer records (or finds) the sender's code and returns the denial
	// that carries it.
	Offer(ctx context.Context, turnID string, m *domain.MessageReceived) (domain.AccessDenied, error)
}

// DriverConfig tunes the driver.
type DriverConfig struct {
	ModelFast        string
	ModelComplex     string // multi-step plans
	Classify         bool   // classify each message: direct answer or plan
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
	// Sandbox is the provider's sandbox mode; its constraint text leads
	// the system prompt.
	Sandbox string
	// Redactor masks configured secrets in error texts before they are
	// recorded: a failing server may echo a token back.
	Redactor *redact.Redactor
	// Inputs names the DecisionInputs this process decides with (their
	// hash); each access decision records it.
	Inputs string
	// Capabilities is what this process can do; the system prompt keeps
	// only the passages about those (nil: the prompt as written).
	// Projects and skills are looked at per turn.
	Capabilities *prompts.Capabilities
	// ActionBackoff is the pause before a failed scheduled action's second
	// call; the third waits four times longer (0: 2 s).
	ActionBackoff time.Duration
}

// Profiles loads and changes sender profiles.
type Profiles interface {
	Load(ctx context.Context, channel, senderID string) (domain.SenderProfile, error)
	Decide(ctx context.Context, channel, senderID string, md domain.Metadata, decide func(domain.SenderProfile) ([]domain.Payload, error)) (domain.SenderProfile, error)
}

// Driver runs turns: it folds a turn's stream, decides the single next
// step, performs it and records the outcome, until the turn completes.
// Because every outcome is recorded before the next step starts, a turn
// interrupted at any point resumes from its last event.
type Driver struct {
	Store    eventstore.Store
	Registry *domain.Registry
	Senders  Profiles
	Read     *projections.Queries
	Channels ChannelSet
	Provider Provider
	Prompts  *prompts.Set
	Auth     Auth
	Pairing  PairingGate // nil: unknown senders are denied
	Commands CommandHook
	Replies  ReplyHook
	Skills   *skills.Library // nil: no skills
	// Projects imports project definitions and reads them from the log;
	// nil: no projects.
	Projects ProjectCatalog
	Config   DriverConfig
	Logger   *slog.Logger
	Now      func() time.Time

	// Images finds the workspace images a turn made (nil: the workspace
	// on disk, see images.go).
	Images WorkspaceImages
	// PromptTexts records contexts by reference (nil: in full).
	PromptTexts *promptstore.Store
	// Replied holds the turns whose final reply went out before their
	// completion was recorded (NewDriver and the scheduler set it).
	Replied *RepliedTurns
}

// NewDriver checks a driver's collaborators: the store, registry, read
// model, channels, provider, prompts and logger are required; Commands
// and Replies may be nil (no command answers, replies sent as written).
func NewDriver(d Driver) (*Driver, error) {
	switch {
	case d.Store == nil, d.Registry == nil, d.Read == nil, d.Channels == nil, d.Provider == nil, d.Prompts == nil, d.Logger == nil:
		return nil, errors.New("pipeline: driver needs a store, registry, read model, channels, provider, prompts and logger")
	case d.Senders == nil:
		return nil, errors.New("pipeline: driver needs the sender profiles")
	}
	if d.Replied == nil {
		d.Replied = NewRepliedTurns()
	}
	return &d, nil
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
	// effected is set while pending holds the outcome of an effect outside
	// omega (a provider's reply or failure, a message sent). Recomputing it
	// would repeat the effect, so recording it is retried, not given up.
	effected bool
	// senderWritten is set by a step that wrote to the sender's stream
	// (a session started or cleared, markers applied), so that the
	// profile is read again before the next step.
	senderWritten bool
}

func (s *turnState) add(ps ...domain.Payload) {
	for _, p := range ps {
		s.Apply(p, s.Version, time.Time{})
		s.pending = append(s.pending, p)
	}
}

// addOutcome adds the outcome of an effect outside omega (see effected).
func (s *turnState) addOutcome(ps ...domain.Payload) {
	s.add(ps...)
	s.effected = true
}

// Run drives a turn to completion.
func (d *Driver) Run(ctx context.Context, turnID string) error {
	st := &turnState{Turn: domain.Turn{ID: turnID}}
	version, err := eventstore.Fold(ctx, d.Store, d.Registry, domain.TurnStream(turnID), st)
	if err != nil {
		return err
	}
	st.Version = version
	if st.Received == nil {
		return fmt.Errorf("turn %s has no message", turnID)
	}
	if err := d.resolveContext(ctx, st); err != nil {
		return err
	}
	log := d.Logger.With("turn", turnID, "channel", st.Received.Channel, "sender", st.Received.SenderID)
	var profile domain.SenderProfile
	stale := true
	for {
		// Only some steps write to the sender's stream; reload after those.
		if stale {
			if profile, err = d.loadProfile(ctx, st); err != nil {
				return err
			}
		}
		env := domain.TurnEnv{
			// A crash between recording Welcomed and sending the welcome
			// must still send it.
			SenderWelcomed: profile.Welcomed && (profile.WelcomedTurn != turnID || st.WelcomeSent),
			IsCommand:      st.Received.Task == nil && d.Commands != nil && d.Commands.IsCommand(st.Received.Text),
			// A scheduled action already says what to do: no plan routing.
			Classify: d.Config.Classify && st.Received.Task == nil,
		}
		step := st.Next(env)
		if step == domain.StepNone {
			return d.flush(ctx, st)
		}
		log.Debug("turn step", "step", step)
		if err := d.perform(ctx, st, step, profile, log); err != nil {
			return fmt.Errorf("turn %s: %s: %w", turnID, step, err)
		}
		stale = d.writesSender(step) || st.senderWritten
		st.senderWritten = false
	}
}

// loadProfile reads the turn's sender profile.
func (d *Driver) loadProfile(ctx context.Context, st *turnState) (profile domain.SenderProfile, err error) {
	load := func(bool) (err error) {
		profile, err = d.Senders.Load(ctx, st.Received.Channel, st.Received.SenderID)
		return err
	}
	if st.effected {
		// An outcome waits in memory to be recorded with a later step's
		// events: this read must not lose it either.
		return profile, d.durably(ctx, st.ID, "sender profile read", load)
	}
	return profile, load(false)
}

// flushBefore reports whether what was decided before a step must be on
// record before the step acts. It must when the step's effect depends on
// those decisions being final: markers (the raw reply they come from), a
// welcome or command (they write elsewhere), plan steps. A provider call
// records its intent (ProviderCalled) together with everything pending
// right before it calls. A reply need not be: if the process dies after
// sending it, the turn resumes before the send and sends again either way.
// A classification whose outcome is lost is simply asked again.
func (d *Driver) flushBefore(_ *turnState, step domain.Step) bool {
	switch step {
	case domain.StepWelcome, domain.StepCommand, domain.StepPlanStep, domain.StepPlanProgress:
		return true
	case domain.StepProcessReply:
		return d.Replies != nil
	}
	return false
}

// writesSender reports whether a step may change the sender's stream, so
// that the profile must be read again after it. The provider call and the
// reply's markers say so themselves (turnState.senderWritten): most turns
// start no session and carry no marker, and then the profile read at the
// start of the turn stays current.
func (d *Driver) writesSender(step domain.Step) bool {
	switch step {
	case domain.StepWelcome, domain.StepCommand, domain.StepPlanStep, domain.StepPlanProgress:
		return true
	}
	return false
}

// replyActs reports whether processing raw may write to other streams
// (see ReplyActs); a hook that cannot tell is assumed to.
func (d *Driver) replyActs(raw string) bool {
	if d.Replies == nil {
		return false
	}
	if a, ok := d.Replies.(ReplyActs); ok {
		return a.Acts(raw)
	}
	return true
}

// stepFunc performs one step of a turn.
type stepFunc func(d *Driver, ctx context.Context, st *turnState, profile domain.SenderProfile, log *slog.Logger) error

// steps maps each step Turn.Next can decide to what performs it.
var steps = map[domain.Step]stepFunc{
	domain.StepAuthorize: func(d *Driver, ctx context.Context, st *turnState, _ domain.SenderProfile, log *slog.Logger) error {
		return d.authorize(ctx, st, log)
	},
	domain.StepWelcome:      (*Driver).welcome,
	domain.StepCommand:      (*Driver).command,
	domain.StepBuildContext: (*Driver).addContext,
	domain.StepClassify: func(d *Driver, ctx context.Context, st *turnState, _ domain.SenderProfile, log *slog.Logger) error {
		return d.classify(ctx, st, log)
	},
	domain.StepPlanStep:     (*Driver).planStep,
	domain.StepPlanProgress: (*Driver).planProgress,
	domain.StepPlanSummary: func(d *Driver, _ context.Context, st *turnState, profile domain.SenderProfile, _ *slog.Logger) error {
		d.planSummary(st, profile)
		return nil
	},
	domain.StepCallProvider: (*Driver).callProvider,
	domain.StepProcessReply: func(d *Driver, ctx context.Context, st *turnState, profile domain.SenderProfile, _ *slog.Logger) error {
		return d.processReply(ctx, st, profile)
	},
	domain.StepSendReply: (*Driver).sendReply,
	domain.StepCleanup: func(d *Driver, _ context.Context, st *turnState, _ domain.SenderProfile, log *slog.Logger) error {
		st.add(domain.AttachmentsRemoved{Paths: d.removeAttachments(st, log)})
		return nil
	},
	domain.StepComplete: (*Driver).complete,

	domain.StepSendImages: (*Driver).sendImages,
}

func (d *Driver) perform(ctx context.Context, st *turnState, step domain.Step, profile domain.SenderProfile, log *slog.Logger) error {
	if d.flushBefore(st, step) {
		if err := d.flush(ctx, st); err != nil {
			return err
		}
	}
	if do, ok := steps[step]; ok {
		return do(d, ctx, st, profile, log)
	}
	return nil
}

func (d *Driver) authorize(ctx context.Context, st *turnState, log *slog.Logger) error {
	ok, reason, err := d.decide(ctx, st.Received)
	switch {
	case err != nil:
		return err
	case ok:
		st.add(domain.AccessGranted{Reason: reason, Inputs: d.Config.Inputs})
		return nil
	case d.Pairing != nil && d.Pairing.Applies(st.Received):
		denied, err := d.Pairing.Offer(ctx, st.ID, st.Received)
		if err != nil {
			return err
		}
		log.Warn("access denied; pairing code offered", "reason", denied.Reason)
		denied.Inputs = d.Config.Inputs
		st.add(denied)
		return nil
	}
	log.Warn("access denied", "reason", reason)
	st.add(domain.AccessDenied{Reason: reason, Inputs: d.Config.Inputs})
	return nil
}

// decide is Auth.Decide with the senders the owner approved by pairing.
func (d *Driver) decide(ctx context.Context, m *domain.MessageReceived) (bool, string, error) {
	ok, reason := d.Auth.Decide(m)
	if ok || d.Pairing == nil || !d.Pairing.Applies(m) {
		return ok, reason, nil
	}
	paired, err := d.Pairing.Approved(ctx, m)
	if err != nil || !paired {
		return false, reason, err
	}
	return true, "paired on " + m.Channel + " (approved by the owner)", nil
}

func (d *Driver) command(ctx context.Context, st *turnState, profile domain.SenderProfile, log *slog.Logger) error {
	stop := d.typing(ctx, st, log)
	ans, err := d.Commands.Answer(ctx, &st.Turn, profile)
	stop()
	if err != nil {
		return err
	}
	st.add(ans.Events...)
	st.add(domain.CommandAnswered{Command: ans.Command, Reply: ans.Reply})
	return nil
}

func (d *Driver) addContext(ctx context.Context, st *turnState, profile domain.SenderProfile, log *slog.Logger) error {
	sessions, err := d.chatSessions(ctx, st.Received, profile)
	if err != nil {
		return err
	}
	built, err := d.buildContext(ctx, st, profile, sessions)
	if err != nil {
		return err
	}
	if err := d.closeStaleSession(ctx, st, sessions, built); err != nil {
		return err
	}
	if err := d.recordContext(ctx, st, built); err != nil {
		return err
	}
	d.snapshotImages(ctx, st, log)
	return nil
}

func (d *Driver) complete(ctx context.Context, st *turnState, _ domain.SenderProfile, log *slog.Logger) error {
	st.add(domain.TurnCompleted{Status: st.Outcome(), DurationMs: d.now().Sub(st.Received.ReceivedAt).Milliseconds()})
	if err := d.flush(ctx, st); err != nil {
		return err
	}
	log.Info("turn completed", "status", st.Outcome())
	return nil
}

// flush records the pending events with the version the driver read.
// When they hold an effect's outcome the append is retried until it
// succeeds (see durably): the effect must not run again because the
// database was briefly away.
func (d *Driver) flush(ctx context.Context, st *turnState) error {
	if len(st.pending) == 0 {
		return nil
	}
	// No correlation id: the stream names the turn (domain.Event.Correlation).
	md := domain.Metadata{Channel: st.Received.Channel, Sender: st.Received.SenderID}
	evs, err := domain.NewEvents(md, st.pending...)
	if err != nil {
		return err
	}
	stream := domain.TurnStream(st.ID)
	write := func(retry bool) error {
		res, err := d.Store.Append(ctx, stream, eventstore.Exact(st.Version), evs...)
		if err == nil {
			st.Version = res.ToVersion
			return nil
		}
		if retry && errors.Is(err, eventstore.ErrConcurrency) {
			// An earlier attempt may have committed before its answer was lost.
			if ok, lerr := d.recorded(ctx, stream, st.Version, evs); lerr != nil {
				return lerr
			} else if ok {
				st.Version += int64(len(evs))
				return nil
			}
		}
		return fmt.Errorf("record %d event(s): %w", len(evs), err)
	}
	if st.effected {
		err = d.durably(ctx, st.ID, "turn events", write)
	} else {
		err = write(false)
	}
	if err != nil {
		return err
	}
	st.pending, st.effected = nil, false
	return nil
}

// recorded reports whether evs already follow version in stream.
func (d *Driver) recorded(ctx context.Context, stream string, version int64, evs []domain.NewEvent) (bool, error) {
	got, err := d.Store.Load(ctx, stream, version+1)
	if err != nil {
		return false, err
	}
	if len(got) < len(evs) {
		return false, nil
	}
	for i, e := range evs {
		if got[i].ID != e.ID {
			return false, nil
		}
	}
	return true, nil
}

// Backoff of durably: the first retry comes soon, later ones at most
// every recordRetryMax, so an outage of minutes costs a few log lines a
// minute.
const (
	recordRetryFirst = 100 * time.Millisecond
	recordRetryMax   = 5 * time.Second
)

// durably runs write until it succeeds, the context ends, or the error
// cannot pass by retrying (a conflict, a refused value). It guards what
// is recorded after an effect outside omega: giving up would make the
// scheduler run the turn again from its last recorded event and repeat
// the effect (call the provider again, send the reply twice), so only the
// process's end may lose the outcome. write is told whether an earlier
// attempt failed.
func (d *Driver) durably(ctx context.Context, turn, what string, write func(retry bool) error) error {
	wait := recordRetryFirst
	for attempt := 1; ; attempt++ {
		err := write(attempt > 1)
		if err == nil {
			if attempt > 1 {
				d.Logger.Info("recorded after retries", "turn", turn, "what", what, "attempts", attempt)
			}
			return nil
		}
		if ctx.Err() != nil || !retryable(err) {
			return err
		}
		d.Logger.Warn("database unavailable while an effect's outcome awaits its record; retrying so that the effect is not repeated",
			"turn", turn, "what", what, "attempt", attempt, "retry_in", wait, "err", err)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(wait*2, recordRetryMax)
	}
}

// retryable reports whether a failed write may succeed later: not a
// conflict (another writer moved the stream), an invalid append, or a
// value the database refuses (SQLSTATE classes 22, 23 and 42).
func retryable(err error) bool {
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

// record flushes the pending events plus ps.
func (d *Driver) record(ctx context.Context, st *turnState, ps ...domain.Payload) error {
	st.add(ps...)
	return d.flush(ctx, st)
}

// recordOutcome flushes the pending events plus the outcome of an effect
// outside omega, retrying through a database outage.
func (d *Driver) recordOutcome(ctx context.Context, st *turnState, ps ...domain.Payload) error {
	st.addOutcome(ps...)
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
		sent.Error = d.Config.Redactor.Error(err)
	}
	return d.recordOutcome(ctx, st, sent)
}

// recentSummaries is how many past conversations' summaries a context
// recalls, as the seed's get_all_recent_summaries(3).
const recentSummaries = 3

// conversation returns the conversation a turn belongs to and its
// history: the chat's last one while it is active, else a new one named
// after the turn.
func (d *Driver) conversation(ctx context.Context, chat, project string, now time.Time, turnID string) (string, []domain.HistoryMessage, error) {
	c, ok, err := d.Read.RecentConversation(ctx, chat, project, d.Config.HistoryLimit)
	if err != nil {
		return "", nil, err
	}
	if !ok || now.Sub(c.LastAt) >= d.Config.ConversationIdle {
		return turnID, nil, nil
	}
	return c.ID, c.History, nil
}

// userMessage is the message as the model sees it: attachments listed
// first, and marker-shaped text from the user neutralized so that it never
// becomes an instruction to omega, even when the model repeats it. A
// scheduled action's text is omega's own (its description is neutralized
// when written).
func userMessage(m *domain.MessageReceived, text string) string {
	if m.Task == nil {
		text = markers.Neutralize(text)
	}
	if refs := attachmentLines(m.Attachments); refs != "" {
		text = markers.Neutralize(refs) + "\n" + text
	}
	return text
}

// formatHint is how the channel wants replies formatted, if it says.
func (d *Driver) formatHint(channel string) string {
	if ch, ok := d.Channels.Channel(channel); ok {
		if h, ok := ch.(channels.FormatHinter); ok {
			return h.FormatHint()
		}
	}
	return ""
}

// neutralizeHistory neutralizes the user's side of the history (in place,
// since the context records it) and returns it as prompt turns.
func neutralizeHistory(history []domain.HistoryMessage) []promptctx.Turn {
	turns := make([]promptctx.Turn, len(history))
	for i, h := range history {
		if h.Role != "assistant" {
			history[i].Text = markers.Neutralize(h.Text)
		}
		turns[i] = promptctx.Turn{Role: h.Role, Text: history[i].Text}
	}
	return turns
}

// buildContext assembles what the provider is given. The conversation,
// its summaries and the session (sessions, see chatSessions) are the
// chat's: a group turn sees only what was said in that group.
func (d *Driver) buildContext(ctx context.Context, st *turnState, profile domain.SenderProfile, sessions map[string]string) (domain.ContextBuilt, error) {
	m := st.Received
	lang := d.language(st, profile)
	project := profile.ActiveProject
	sender := domain.SenderKey(m.Channel, m.SenderID)
	chat := m.Chat().Key()
	now := d.now()

	// The sender's tasks and the conversation are independent reads: one
	// round trip's wait instead of two before the provider is called.
	var (
		tasks   []promptctx.Task
		reading errgroup.Group
	)
	reading.Go(func() (err error) {
		tasks, err = d.pendingTasks(ctx, m)
		return err
	})
	// A conversation continues while it is active; after the idle time the
	// next message starts a new one. The choice is recorded, so a replay
	// never depends on the configuration of the day.
	conv, history, err := d.conversation(ctx, chat, project, now, st.ID)
	if err := errors.Join(err, reading.Wait()); err != nil {
		return domain.ContextBuilt{}, err
	}
	clean := sanitize.Clean(m.Text)
	message := userMessage(m, clean.Text)
	session := sessions[project]
	model := d.Config.ModelFast
	if m.Task != nil {
		// A scheduled action runs in its task's project, with the full
		// system prompt and the complex model.
		project, session, model = m.Task.Project, "", cmp.Or(d.Config.ModelComplex, d.Config.ModelFast)
	}
	known, err := d.knownProjects(ctx)
	if err != nil {
		return domain.ContextBuilt{}, err
	}
	sk, err := d.skillsFor(ctx, clean.Text)
	if err != nil {
		return domain.ContextBuilt{}, err
	}
	set, caps := d.turnPrompts(known, len(sk.lines) > 0)
	hint := d.formatHint(m.Channel)
	lessons, outcomes, err := d.learning(ctx, sender, project)
	if err != nil {
		return domain.ContextBuilt{}, err
	}
	newConversation := conv == st.ID
	if newConversation {
		session = "" // a closed conversation's session is not resumed (see addContext)
	}
	summaries, err := d.summaries(ctx, chat, project, message, newConversation)
	if err != nil {
		return domain.ContextBuilt{}, err
	}
	turns := neutralizeHistory(history)
	out := promptctx.Build(promptctx.Input{
		Skills:          sk.lines,
		MatchedSkills:   sk.texts(),
		Prompts:         set.Sections(),
		Sandbox:         set.Sandbox(d.Config.Sandbox),
		FirstInSession:  session == "",
		Message:         message,
		SenderName:      m.SenderName,
		Language:        lang,
		Personality:     profile.Personality,
		ActiveProject:   project,
		ProjectRole:     known.Role(project),
		Projects:        known.Names(),
		Now:             now,
		Location:        d.Config.Location,
		PlatformHint:    hint,
		IsGroup:         m.IsGroup,
		Facts:           profile.SortedFacts(),
		History:         turns,
		PendingTasks:    tasks,
		Lessons:         lessons,
		Outcomes:        outcomes,
		Summaries:       summaries,
		NewConversation: newConversation,
	})
	built := domain.ContextBuilt{
		ConversationID:   conv,
		Project:          project,
		Language:         lang,
		Model:            model,
		SessionID:        session,
		Continuation:     session != "",
		SectionsUsed:     out.SectionsUsed,
		System:           out.System,
		SystemPieces:     out.SystemPieces,
		Prompt:           message,
		Message:          message,
		History:          history,
		FactsCount:       len(profile.Facts),
		SanitizeWarnings: clean.Warnings,
		Skills:           sk.names(),
		MCPServers:       skills.ServerNames(sk.matched),
		Capabilities:     caps,
		ProjectsVersion:  known.Version,
	}
	if session != "" {
		built.Prompt, built.PromptPieces, built.SectionsUsed = out.Continuation, out.ContinuationPieces, out.ContinuationSections
	}
	return built, nil
}

// pendingTasks lists the sender's scheduled tasks for the prompt; in a
// group only those set for that group, since its session is shared.
func (d *Driver) pendingTasks(ctx context.Context, m *domain.MessageReceived) ([]promptctx.Task, error) {
	rows, err := d.Read.SenderTasks(ctx, domain.SenderKey(m.Channel, m.SenderID), true)
	if err != nil {
		return nil, err
	}
	out := make([]promptctx.Task, 0, len(rows))
	for _, r := range rows {
		if m.IsGroup && r.ChatID != m.ChatID {
			continue
		}
		out = append(out, promptctx.Task{ID: r.ID, Description: r.Description, Due: r.Due, Repeat: r.Repeat, Action: r.Kind == "action"})
	}
	return out, nil
}

// maxLearning bounds how many lessons and outcomes reach the prompt.
const maxLearning = 20

// learning returns what the sender's turns taught, as the seed scopes it:
// a project's lessons and outcomes only while it is active (labelled and
// first), general ones everywhere; one project's never steer another.
func (d *Driver) learning(ctx context.Context, sender, project string) (lessons, outcomes []string, err error) {
	var l domain.Learning
	if _, err := eventstore.Fold(ctx, d.Store, d.Registry, domain.LearningStream(sender), &l); err != nil {
		return nil, nil, err
	}
	var own, general, ownOut, generalOut []string
	for _, x := range l.Lessons {
		own, general = scoped(own, general, x.Project, project, fmt.Sprintf("[%s] %s", x.Domain, x.Rule))
	}
	for _, r := range l.Rewards {
		ownOut, generalOut = scoped(ownOut, generalOut, r.Project, project, fmt.Sprintf("(%+d) [%s] %s", r.Score, r.Domain, r.Lesson))
	}
	for _, o := range l.Outcomes {
		ownOut, generalOut = scoped(ownOut, generalOut, o.Project, project, o.Outcome)
	}
	return projectFirst(own, general), projectFirst(ownOut, generalOut), nil
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

// providerRequest is the call a turn's context asks for: the prompt on
// the resumed session, or the whole context.
func (d *Driver) providerRequest(c *domain.ContextBuilt, resume bool) providers.Request {
	req := providers.Request{Model: c.Model, WorkDir: d.Config.Workspace}
	if resume {
		req.SessionID, req.Prompt = c.SessionID, c.Prompt
		return req
	}
	req.System, req.Prompt = c.System, c.Message
	for _, h := range c.History {
		req.History = append(req.History, providers.Message{Role: h.Role, Content: h.Text})
	}
	return req
}

// providerFailed records a failed call. A resumed session that failed may
// be gone or broken: it is forgotten and the call tried once more with the
// whole context.
func (d *Driver) providerFailed(ctx context.Context, st *turnState, err error, resume bool, elapsed time.Duration, statusCount int, log *slog.Logger) error {
	class := providers.ClassOf(err)
	failed := domain.ProviderFailed{Provider: d.providerName(), Class: class.String(), Message: d.Config.Redactor.Error(err), DurationMs: elapsed.Milliseconds(), StatusMessages: statusCount}
	if resume && class != providers.Unavailable {
		failed.RetryFullContext = true
		if err := d.durably(ctx, st.ID, "session cleared", func(bool) error {
			return d.clearSession(ctx, st, st.Context.Project, "resume failed: "+class.String())
		}); err != nil {
			return err
		}
	}
	log.Warn("provider call failed", "class", class, "err", err, "retry_full_context", failed.RetryFullContext)
	return d.recordOutcome(ctx, st, failed)
}

// startSession records the provider's session on the chat's profile (the
// sender's, or the group's), so that the chat's next turn resumes it;
// nothing when the provider keeps none.
func (d *Driver) startSession(ctx context.Context, st *turnState, sessionID string) error {
	if sessionID == "" {
		return nil
	}
	st.senderWritten = true
	m, project, chat := st.Received, st.Context.Project, st.Received.Chat()
	md := domain.Metadata{CorrelationID: st.ID, Channel: m.Channel, Sender: m.SenderID, Project: project}
	return d.durably(ctx, st.ID, "session started", func(bool) error {
		_, err := d.Senders.Decide(ctx, chat.Channel, chat.ID, md, func(p domain.SenderProfile) ([]domain.Payload, error) {
			return p.StartSession(project, sessionID, d.providerName()), nil
		})
		return err
	})
}

func (d *Driver) callProvider(ctx context.Context, st *turnState, profile domain.SenderProfile, log *slog.Logger) error {
	c := st.Context
	if st.ActionRetry() && !st.Failure.RetryFullContext {
		// A failed scheduled action waits before its next attempt.
		if err := wait.Sleep(ctx, cmp.Or(d.Config.ActionBackoff, 2*time.Second)<<(2*(st.Calls-1))); err != nil {
			return err
		}
	}
	if d.Config.ProviderProblem != nil {
		return d.record(ctx, st, domain.ProviderFailed{Provider: d.providerName(), Class: providers.Unavailable.String(), Message: d.Config.Redactor.Error(d.Config.ProviderProblem)})
	}
	resume := c.SessionID != "" && st.Failure == nil
	req := d.providerRequest(c, resume)
	var err error
	if req.MCPServers, err = d.mcpServers(ctx, c.Skills); err != nil {
		return err
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
		return d.providerFailed(ctx, st, err, resume, elapsed, statusCount, log)
	}
	replied := domain.ProviderReplied{
		Provider: d.providerName(), Model: firstNonEmpty(resp.Model, c.Model), Text: resp.Text, SessionID: resp.SessionID,
		DurationMs: elapsed.Milliseconds(), InputTokens: resp.InputTokens, OutputTokens: resp.OutputTokens,
		NumTurns: resp.NumTurns, Resumes: resp.Resumes, PromptBytes: len(req.System) + len(req.Prompt), ReplyBytes: len(resp.Text),
		StatusMessages: statusCount, CacheReadTokens: resp.CacheReadTokens, CacheWriteTokens: resp.CacheWriteTokens,
		CostUSD: resp.CostUSD, UsageReported: resp.UsageReported,
	}
	if err := d.startSession(ctx, st, resp.SessionID); err != nil {
		return err
	}
	st.addOutcome(replied)
	if d.Replies != nil {
		// The reply is paid for, and its markers act on other streams: it
		// is on record before anything uses it, so a process that dies
		// later never calls the provider again for it. (Recording it with
		// the completion would save one append per turn and re-buy the
		// reply after a crash between the send and the record.)
		return d.flush(ctx, st)
	}
	return nil
}

// clearSession forgets the chat's provider session in project.
func (d *Driver) clearSession(ctx context.Context, st *turnState, project, reason string) error {
	st.senderWritten = true
	m, chat := st.Received, st.Received.Chat()
	md := domain.Metadata{CorrelationID: st.ID, Channel: m.Channel, Sender: m.SenderID, Project: project}
	_, err := d.Senders.Decide(ctx, chat.Channel, chat.ID, md, func(p domain.SenderProfile) ([]domain.Payload, error) {
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
		st.senderWritten = d.replyActs(raw)
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
		if p := st.DenyPairing; p != nil {
			return pairingText(lang, p, d.Config.Location)
		}
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
	// From here on the sender may read the answer and write again before
	// the completion is recorded: that message is not queued behind this
	// turn, so it must not be acknowledged as if it were.
	d.Replied.Mark(st.ID)
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
		st.addOutcome(domain.ReplyFailed{Kind: kind, Class: deliveryClass(err), Error: d.Config.Redactor.Error(err)})
		return nil
	}
	sent := domain.ReplySent{Kind: kind, Text: text, Chunks: res.Chunks, PlatformIDs: res.PlatformIDs, PlainText: res.PlainText}
	st.addOutcome(sent.WithoutReadyText(st.Ready))
	return nil
}

func deliveryClass(err error) string { return channels.FailureClass(err) }

var errNoChannel = channels.ErrNoChannel

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
	version, err := eventstore.Fold(ctx, d.Store, d.Registry, domain.TurnStream(turnID), st)
	if err != nil {
		return err
	}
	st.Version = version
	if st.Received == nil || st.Acked || st.Completed != nil || st.Granted || st.Denied {
		return nil
	}
	if ok, _, err := d.decide(ctx, st.Received); err != nil || !ok {
		return err // strangers are answered by their own turn, not acknowledged
	}
	profile, err := d.Senders.Load(ctx, st.Received.Channel, st.Received.SenderID)
	if err != nil {
		return err
	}
	text := i18n.Text(d.language(st, profile), i18n.BusyAck)
	ack := domain.AckSent{Text: text}
	sent, err := d.sendAck(ctx, st, text)
	if err != nil {
		d.Logger.Warn("busy acknowledgement not delivered", "turn", turnID, "err", err)
	}
	ack.Skipped = err == nil && !sent
	err = d.record(ctx, st, ack)
	if errors.Is(err, eventstore.ErrConcurrency) {
		return nil // the turn started meanwhile
	}
	return err
}

// sendAck sends a busy acknowledgement. A channel that paces its sends
// sends it only if that costs the reply after it nothing; sent is false
// when it was skipped for that reason.
func (d *Driver) sendAck(ctx context.Context, st *turnState, text string) (sent bool, err error) {
	ch, ok := d.Channels.Channel(st.Received.Channel)
	if !ok {
		return false, fmt.Errorf("%w: %s", errNoChannel, st.Received.Channel)
	}
	if c, ok := ch.(channels.CourtesySender); ok {
		return c.SendCourtesy(ctx, st.Received.ChatID, text)
	}
	_, err = d.send(ctx, st, text)
	return err == nil, err
}

// Transient reports whether a turn's failure may pass by waiting: the
// database does not answer (the turn's stream cannot be read). Anything
// else, a panic or a deterministic error, fails the same way again.
func (d *Driver) Transient(ctx context.Context, turnID string, _ error) bool {
	_, err := d.Store.Load(ctx, domain.TurnStream(turnID), 1)
	return err != nil && ctx.Err() == nil
}

// Abandon ends a turn that cannot run (its handler was poisoned): the
// sender is told in their language that something went wrong and the turn
// is completed with status error, so the sender's next turn can run.
func (d *Driver) Abandon(ctx context.Context, turnID, reason string) error {
	st := &turnState{Turn: domain.Turn{ID: turnID}}
	version, err := eventstore.Fold(ctx, d.Store, d.Registry, domain.TurnStream(turnID), st)
	if err != nil {
		return err
	}
	st.Version = version
	if st.Received == nil || st.Completed != nil {
		return nil
	}
	log := d.Logger.With("turn", turnID, "channel", st.Received.Channel, "sender", st.Received.SenderID)
	log.Error("turn abandoned after its handler was poisoned", "reason", d.Config.Redactor.String(reason))
	profile, err := d.Senders.Load(ctx, st.Received.Channel, st.Received.SenderID)
	if err != nil {
		log.Warn("sender profile unreadable; answering in the message's language", "err", err)
	}
	text := i18n.Text(d.language(st, profile), i18n.ErrUnknown)
	if res, err := d.send(ctx, st, text); err != nil {
		log.Warn("failure notice not delivered", "err", err)
		st.addOutcome(domain.ReplyFailed{Kind: "error", Class: deliveryClass(err), Error: d.Config.Redactor.Error(err)})
	} else {
		st.addOutcome(domain.ReplySent{Kind: "error", Text: text, Chunks: res.Chunks, PlatformIDs: res.PlatformIDs, PlainText: res.PlainText})
	}
	st.add(domain.TurnCompleted{Status: domain.StatusError, DurationMs: d.now().Sub(st.Received.ReceivedAt).Milliseconds()})
	return d.flush(ctx, st)
}
