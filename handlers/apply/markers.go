// Package apply applies the markers of a provider's reply: each marker's
// effect is recorded as events on the stream it concerns, and the reply
// the user sees is the text without them.
package apply

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/markers"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/handlers/effects"
	"github.com/omega-gateway/omega/handlers/pipeline"
)

// WhatsAppPairing sends a WhatsApp pairing QR code to a chat.
type WhatsAppPairing interface {
	SendQR(ctx context.Context, channel, chatID string) error
}

// Profiles reads sender profiles and finds the stream each lives on
// (senders.Service).
type Profiles interface {
	Load(ctx context.Context, channel, senderID string) (domain.SenderProfile, error)
	ProfileStream(ctx context.Context, channel, senderID string) (string, error)
}

// Follower is told what a reply's markers did once they are on record: a
// process manager that carries on what a marker began (self-heal's
// follow-ups, the heartbeat's schedule) reacts to its own markers there.
type Follower interface {
	Applied(applied []domain.AppliedMarker)
}

// Markers is the ReplyHook that applies the provider's markers as events
// and returns the reply without them, followed by the task confirmation.
type Markers struct {
	effects.Recorder
	Profiles Profiles
	Location *time.Location
	WhatsApp WhatsAppPairing // nil: WhatsApp is not enabled
	Owner    Owner           // nil: reports are recorded, nobody is alerted
	// Followers are told what each reply's markers did.
	Followers []Follower
	Logger    *slog.Logger
}

// New checks a Markers hook's collaborators: the recorder, the profiles
// and the logger are required; a nil Location means UTC.
func New(m Markers) (*Markers, error) {
	if m.Store() == nil || m.Profiles == nil || m.Logger == nil {
		return nil, errors.New("apply: markers need an effects recorder, the sender profiles and a logger")
	}
	if m.Location == nil {
		m.Location = time.UTC
	}
	return &m, nil
}

// rank is a marker's place in the seed's processing order (its spec's
// Order); unordered markers come after, in their written order.
func rank(name string) int {
	if spec, ok := markers.Lookup(name); ok && spec.Order > 0 {
		return spec.Order
	}
	return math.MaxInt
}

// markerRun is the context one reply's markers are applied in.
type markerRun struct {
	turn    *domain.Turn
	step    int
	project string
	sender  string // read-model key
	lang    string
	applied []domain.AppliedMarker
	confirm []string
	events  []domain.Payload
	profile domain.SenderProfile
	forgot  bool
}

// Process applies the markers of raw (the provider's reply to the turn,
// or to plan step step) and returns what the user sees plus the turn
// events that record the markers' effects.
func (h *Markers) Process(ctx context.Context, turn *domain.Turn, raw string, step int) (pipeline.Processed, error) {
	res := markers.ParseIn(raw, h.Location)
	m := turn.Received
	run := &markerRun{turn: turn, step: step, sender: domain.SenderKey(m.Channel, m.SenderID)}
	if turn.Context != nil {
		run.project = turn.Context.Project
	}
	type indexed struct {
		i int
		m markers.Marker
	}
	list := make([]indexed, len(res.Markers))
	for i, mk := range res.Markers {
		list[i] = indexed{i, mk}
	}
	slices.SortStableFunc(list, func(a, b indexed) int { return cmp.Compare(rank(a.m.Name()), rank(b.m.Name())) })

	if len(list) > 0 { // only markers need the profile: most replies have none
		profile, err := h.Profiles.Load(ctx, m.Channel, m.SenderID)
		if err != nil {
			return pipeline.Processed{}, err
		}
		run.profile = profile
		run.lang = h.language(turn, profile)
	}
	echo := markers.EchoFilter(m.Text, h.Location)
	for _, x := range list {
		if echo(x.m) {
			// Markers are instructions from the model's own reply only.
			run.applied = append(run.applied, domain.AppliedMarker{Name: x.m.Name(), Effect: rejectedEcho})
			continue
		}
		md := domain.Metadata{CorrelationID: turn.ID, CausationID: fmt.Sprintf("%s/s%d/m%d", turn.ID, step, x.i),
			Channel: m.Channel, Sender: m.SenderID, Project: run.project}
		am, err := h.apply(ctx, run, md, x.m)
		if err != nil {
			return pipeline.Processed{}, fmt.Errorf("apply %s: %w", x.m.Name(), err)
		}
		am.Name = x.m.Name()
		run.applied = append(run.applied, am)
	}
	for _, inv := range res.Invalid {
		run.applied = append(run.applied, domain.AppliedMarker{Name: inv.Name, Effect: "rejected: " + inv.Reason})
	}
	out := pipeline.Processed{Text: res.Text}
	if len(run.confirm) > 0 {
		out.Text = strings.TrimSpace(out.Text + "\n\n" + strings.Join(run.confirm, "\n"))
	}
	if len(run.applied) > 0 {
		out.Events = append(out.Events, domain.MarkersApplied{Step: step, Markers: run.applied})
		for _, f := range h.Followers {
			f.Applied(run.applied)
		}
	}
	out.Events = append(out.Events, run.events...)
	return out, nil
}

// CheckIn applies a check-in's reply (the heartbeat's, a self-heal
// follow-up's) through hook as a turn's reply and returns the text the
// owner sees and what its markers did: the runners' Markers port.
func CheckIn(hook pipeline.ReplyHook) func(context.Context, *domain.Turn, string) (string, []domain.AppliedMarker, error) {
	return func(ctx context.Context, turn *domain.Turn, raw string) (string, []domain.AppliedMarker, error) {
		p, err := hook.Process(ctx, turn, raw, 0)
		if err != nil {
			return "", nil, err
		}
		var applied []domain.AppliedMarker
		for _, e := range p.Events {
			if m, ok := e.(domain.MarkersApplied); ok {
				applied = append(applied, m.Markers...)
			}
		}
		return p.Text, applied, nil
	}
}

// Acts reports whether raw holds a marker, i.e. whether processing it may
// write to streams other than the turn's: only then must the raw reply be
// on record first (see Driver.flushBefore).
func (h *Markers) Acts(raw string) bool {
	return len(markers.ParseIn(raw, h.Location).Markers) > 0
}

// source tags learning recorded by a heartbeat check-in.
func (r *markerRun) source() string {
	if r.turn.Received.Heartbeat {
		return "heartbeat"
	}
	return ""
}

func (h *Markers) language(turn *domain.Turn, p domain.SenderProfile) string {
	if p.Language != "" {
		return i18n.OrDefault(p.Language)
	}
	return i18n.Detect(turn.Received.Text)
}

func (h *Markers) when(t time.Time) string {
	loc := h.Location
	if loc == nil {
		loc = time.UTC
	}
	return t.In(loc).Format("Mon 2 Jan 2006 15:04 MST")
}

// apply records one marker and describes its effect.
func (h *Markers) apply(ctx context.Context, run *markerRun, md domain.Metadata, mk markers.Marker) (domain.AppliedMarker, error) {
	if f, ok := appliers[mk.Name()]; ok {
		return f(ctx, h, run, md, mk)
	}
	return domain.AppliedMarker{Effect: "ignored"}, nil // unreachable: a test checks every spec has an applier
}

// applyFunc applies one parsed marker.
type applyFunc func(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, mk markers.Marker) (domain.AppliedMarker, error)

// typed adapts an apply function of one marker type.
func typed[M markers.Marker](f func(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, m M) (domain.AppliedMarker, error)) applyFunc {
	return func(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, mk markers.Marker) (domain.AppliedMarker, error) {
		return f(ctx, h, run, md, mk.(M))
	}
}

// appliers holds one function per marker spec (markers.Specs), keyed by
// protocol name; TestEveryMarkerSpecHasAnApplier keeps them in step.
var appliers = map[string]applyFunc{
	markers.NameSchedule:                   typed(applySchedule),
	markers.NameScheduleAction:             typed(applySchedule),
	markers.NameCancelTask:                 typed(applyCancel),
	markers.NameUpdateTask:                 typed(applyUpdate),
	markers.NameProjectActivate:            typed(applyProjectActivate),
	markers.NameProjectDeactivate:          typed(applyProjectDeactivate),
	markers.NameWhatsAppQR:                 typed(applyWhatsAppQR),
	markers.NameLangSwitch:                 typed(applyLangSwitch),
	markers.NamePersonality:                typed(applyPersonality),
	markers.NamePurgeFacts:                 typed(applyPurgeFacts),
	markers.NameForgetConversation:         typed(applyForget),
	markers.NameHeartbeatAdd:               typed(applyHeartbeatAdd),
	markers.NameHeartbeatRemove:            typed(applyHeartbeatRemove),
	markers.NameHeartbeatInterval:          typed(applyHeartbeatInterval),
	markers.NameHeartbeatSuppressSection:   typed(applyHeartbeatSuppress),
	markers.NameHeartbeatUnsuppressSection: typed(applyHeartbeatUnsuppress),
	markers.NameHeartbeatOK:                typed(effectOnly[markers.HeartbeatOK]("nothing to report")),
	markers.NameLimitation:                 typed(applyLimitation),
	markers.NameSelfHeal:                   typed(applySelfHeal),
	markers.NameSelfHealResolved:           typed(applySelfHealResolved),
	markers.NameBugReport:                  typed(applyBugReport),
	markers.NameSkillImprove:               typed(applySkillImprove),
	markers.NameActionOutcome:              typed(applyActionOutcome),
	markers.NameReward:                     typed(applyReward),
	markers.NameLesson:                     typed(applyLesson),
	markers.NameSilent:                     typed(effectOnly[markers.Silent]("silent")),
}

// effectOnly is the applier of a marker that records nothing but itself.
func effectOnly[M markers.Marker](effect string) func(context.Context, *Markers, *markerRun, domain.Metadata, M) (domain.AppliedMarker, error) {
	return func(context.Context, *Markers, *markerRun, domain.Metadata, M) (domain.AppliedMarker, error) {
		return domain.AppliedMarker{Effect: effect}, nil
	}
}

// onSender applies a decision on the sender's own stream and keeps the
// run's profile current.
func (h *Markers) onSender(ctx context.Context, run *markerRun, md domain.Metadata, effect string, decide func(domain.SenderProfile) []domain.Payload) (domain.AppliedMarker, error) {
	am, p, err := h.onProfile(ctx, run.turn.Received.Sender(), md, effect, decide)
	if err == nil {
		run.profile = p
	}
	return am, err
}

// onChat applies a decision on the profile holding the chat's provider
// session: the sender's, or in a group the group's own.
func (h *Markers) onChat(ctx context.Context, run *markerRun, md domain.Metadata, effect string, decide func(domain.SenderProfile) []domain.Payload) (domain.AppliedMarker, error) {
	m := run.turn.Received
	if m.Chat() == m.Sender() {
		return h.onSender(ctx, run, md, effect, decide)
	}
	am, _, err := h.onProfile(ctx, m.Chat(), md, effect, decide)
	return am, err
}

// onProfile applies a decision on ref's profile stream, once per marker.
func (h *Markers) onProfile(ctx context.Context, ref domain.SenderRef, md domain.Metadata, effect string, decide func(domain.SenderProfile) []domain.Payload) (domain.AppliedMarker, domain.SenderProfile, error) {
	stream, err := h.Profiles.ProfileStream(ctx, ref.Channel, ref.ID)
	if err != nil {
		return domain.AppliedMarker{}, domain.SenderProfile{}, err
	}
	p := &domain.SenderProfile{}
	done, err := h.Once(ctx, stream, md, func() eventstore.Aggregate { p = &domain.SenderProfile{}; return p },
		func() ([]domain.Payload, error) { return decide(*p), nil })
	if err != nil {
		return domain.AppliedMarker{}, domain.SenderProfile{}, err
	}
	if done {
		effect += " (already recorded)"
	}
	return domain.AppliedMarker{Effect: effect, Stream: stream}, *p, nil
}

func applyProjectActivate(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, v markers.ProjectActivate) (domain.AppliedMarker, error) {
	return h.onSender(ctx, run, md, "project "+v.Project+" active", func(p domain.SenderProfile) []domain.Payload {
		if p.ActiveProject == v.Project {
			return nil
		}
		return []domain.Payload{domain.ProjectActivated{Project: v.Project}}
	})
}

func applyProjectDeactivate(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, _ markers.ProjectDeactivate) (domain.AppliedMarker, error) {
	return h.onSender(ctx, run, md, "no project active", func(p domain.SenderProfile) []domain.Payload {
		if p.ActiveProject == "" {
			return nil
		}
		return []domain.Payload{domain.ProjectDeactivated{Project: p.ActiveProject}}
	})
}

func applyWhatsAppQR(ctx context.Context, h *Markers, run *markerRun, _ domain.Metadata, _ markers.WhatsAppQR) (domain.AppliedMarker, error) {
	if h.WhatsApp == nil {
		return domain.AppliedMarker{Effect: "whatsapp not enabled"}, nil
	}
	m := run.turn.Received
	if err := h.WhatsApp.SendQR(ctx, m.Channel, m.ChatID); err != nil {
		h.Logger.Warn("whatsapp pairing failed", "turn", run.turn.ID, "err", err)
		return domain.AppliedMarker{Effect: "whatsapp pairing failed: " + err.Error()}, nil
	}
	return domain.AppliedMarker{Effect: "qr sent"}, nil
}

func applyLangSwitch(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, v markers.LangSwitch) (domain.AppliedMarker, error) {
	lang := v.Language
	if l, ok := i18n.Normalize(lang); ok {
		lang = l
	}
	am, err := h.onSender(ctx, run, md, "language "+lang, func(p domain.SenderProfile) []domain.Payload { return p.SwitchLanguage(lang) })
	run.lang = h.language(run.turn, run.profile)
	return am, err
}

func applyPersonality(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, v markers.Personality) (domain.AppliedMarker, error) {
	return h.onSender(ctx, run, md, "personality set", func(p domain.SenderProfile) []domain.Payload { return p.SetPersonality(v.Style) })
}

func applyPurgeFacts(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, _ markers.PurgeFacts) (domain.AppliedMarker, error) {
	return h.onSender(ctx, run, md, "facts purged", func(p domain.SenderProfile) []domain.Payload { return p.PurgeFacts() })
}

func applyForget(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, _ markers.ForgetConversation) (domain.AppliedMarker, error) {
	am, err := h.onChat(ctx, run, md, "conversation closed, session cleared", func(p domain.SenderProfile) []domain.Payload { return p.ClearSession(run.project, "forget") })
	if err == nil && !run.forgot && run.turn.Context != nil {
		run.forgot = true
		run.events = append(run.events, domain.ConversationClosed{ConversationID: run.turn.Context.ConversationID, Sender: run.sender, Project: run.project})
	}
	return am, err
}

func applySelfHeal(ctx context.Context, h *Markers, _ *markerRun, md domain.Metadata, v markers.SelfHeal) (domain.AppliedMarker, error) {
	return onStream(ctx, h, md, domain.SelfHealStream, newSelfHeal, "self-heal", func(s *domain.SelfHeal) []domain.Payload {
		return s.Heal(v.Description, v.Verification)
	})
}

func applySelfHealResolved(ctx context.Context, h *Markers, _ *markerRun, md domain.Metadata, _ markers.SelfHealResolved) (domain.AppliedMarker, error) {
	return onStream(ctx, h, md, domain.SelfHealStream, newSelfHeal, "self-heal resolved", (*domain.SelfHeal).Resolve)
}

func applySkillImprove(ctx context.Context, h *Markers, _ *markerRun, md domain.Metadata, v markers.SkillImprove) (domain.AppliedMarker, error) {
	return onStream(ctx, h, md, domain.SkillStream(v.Skill), newSkill, "skill lesson for "+v.Skill, func(s *domain.Skill) []domain.Payload {
		return s.Improve(v.Skill, v.Lesson)
	})
}

func applyActionOutcome(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, v markers.ActionOutcome) (domain.AppliedMarker, error) {
	return onStream(ctx, h, md, domain.LearningStream(run.sender), newLearning, "outcome recorded", func(*domain.Learning) []domain.Payload {
		return []domain.Payload{domain.ActionOutcomeRecorded{Outcome: v.Outcome, Project: run.project}}
	})
}

func applyReward(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, v markers.Reward) (domain.AppliedMarker, error) {
	return onStream(ctx, h, md, domain.LearningStream(run.sender), newLearning, fmt.Sprintf("reward %+d", v.Score), func(*domain.Learning) []domain.Payload {
		return []domain.Payload{domain.RewardRecorded{Score: v.Score, Domain: v.Domain, Lesson: v.Lesson, Project: run.project, Source: run.source()}}
	})
}

func applyLesson(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, v markers.Lesson) (domain.AppliedMarker, error) {
	return onStream(ctx, h, md, domain.LearningStream(run.sender), newLearning, "lesson learned", func(l *domain.Learning) []domain.Payload {
		ps := l.Learn(v.Domain, v.Rule, run.project)
		for i, p := range ps {
			if e, ok := p.(domain.LessonLearned); ok {
				e.Source = run.source()
				ps[i] = e
			}
		}
		return ps
	})
}

// Fresh states of the agent's own aggregates, one per load attempt.
func newLimitations() *domain.Limitations { return &domain.Limitations{} }
func newSelfHeal() *domain.SelfHeal       { return &domain.SelfHeal{} }
func newSkill() *domain.Skill             { return &domain.Skill{} }
func newLearning() *domain.Learning       { return &domain.Learning{} }
func newHeartbeat() *domain.Heartbeat     { return &domain.Heartbeat{} }

// onStream applies a decision on one of the agent's own streams, folded
// into a fresh S for each attempt.
func onStream[S eventstore.Aggregate](ctx context.Context, h *Markers, md domain.Metadata, stream string, fresh func() S, effect string, decide func(S) []domain.Payload) (domain.AppliedMarker, error) {
	done, decided, err := decideOnStream(ctx, h, md, stream, fresh, decide)
	if err != nil {
		return domain.AppliedMarker{}, err
	}
	if !done && decided == 0 {
		effect += ": nothing new"
	}
	return domain.AppliedMarker{Effect: effect, Stream: stream}, nil
}

// decideOnStream runs decide once per marker on stream; done: an earlier
// run of the marker recorded it, decided: how many events this run added.
func decideOnStream[S eventstore.Aggregate](ctx context.Context, h *Markers, md domain.Metadata, stream string, fresh func() S, decide func(S) []domain.Payload) (done bool, decided int, err error) {
	var state S
	done, err = h.Once(ctx, stream, md, func() eventstore.Aggregate { state = fresh(); return state },
		func() ([]domain.Payload, error) { ps := decide(state); decided = len(ps); return ps, nil })
	return done, decided, err
}

func applyHeartbeatAdd(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, v markers.HeartbeatAdd) (domain.AppliedMarker, error) {
	return h.heartbeat(ctx, run, md, func(hb *domain.Heartbeat) ([]domain.Payload, error) { return hb.Add(v.Item), nil })
}

func applyHeartbeatRemove(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, v markers.HeartbeatRemove) (domain.AppliedMarker, error) {
	return h.heartbeat(ctx, run, md, func(hb *domain.Heartbeat) ([]domain.Payload, error) { return hb.Remove(v.Item), nil })
}

func applyHeartbeatSuppress(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, v markers.HeartbeatSuppressSection) (domain.AppliedMarker, error) {
	return h.heartbeat(ctx, run, md, func(hb *domain.Heartbeat) ([]domain.Payload, error) { return hb.Suppress(v.Section), nil })
}

func applyHeartbeatUnsuppress(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, v markers.HeartbeatUnsuppressSection) (domain.AppliedMarker, error) {
	return h.heartbeat(ctx, run, md, func(hb *domain.Heartbeat) ([]domain.Payload, error) { return hb.Unsuppress(v.Section), nil })
}

func applyHeartbeatInterval(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, v markers.HeartbeatInterval) (domain.AppliedMarker, error) {
	var refused bool
	am, err := h.heartbeat(ctx, run, md, func(hb *domain.Heartbeat) ([]domain.Payload, error) {
		ps, err := hb.SetInterval(v.Minutes, domain.IntervalByAgent)
		refused = err != nil
		return ps, err
	})
	if err == nil && !refused {
		run.confirm = append(run.confirm, i18n.Text(run.lang, i18n.HeartbeatInterval, v.Minutes))
	}
	return am, err
}

// heartbeat applies a checklist decision to the project's heartbeat (the
// global one outside a project). A refused decision is recorded as the
// marker's effect.
func (h *Markers) heartbeat(ctx context.Context, run *markerRun, md domain.Metadata, decide func(*domain.Heartbeat) ([]domain.Payload, error)) (domain.AppliedMarker, error) {
	scope := cmp.Or(run.project, domain.GlobalHeartbeat)
	stream := domain.HeartbeatStream(scope)
	var decideErr error
	am, err := onStream(ctx, h, md, stream, newHeartbeat, "checklist "+scope, func(hb *domain.Heartbeat) []domain.Payload {
		ps, err := decide(hb)
		decideErr = err
		return ps
	})
	if decideErr != nil {
		return domain.AppliedMarker{Effect: "rejected: " + decideErr.Error(), Stream: stream}, err
	}
	return am, err
}

func applySchedule(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, s markers.Schedule) (domain.AppliedMarker, error) {
	m := run.turn.Received
	kind, key := domain.TaskKindReminder, i18n.TaskScheduled
	if s.Action {
		kind, key = domain.TaskKindAction, i18n.ActionScheduled
	}
	id := effects.TaskID(md.CausationID)
	existing, err := h.Read().SenderTasks(ctx, run.sender, true)
	if err != nil {
		return domain.AppliedMarker{}, err
	}
	task, err := h.ScheduleTask(ctx, md, domain.TaskScheduled{ID: id, Description: s.Description, Due: s.Due.UTC(), Repeat: string(s.Repeat),
		Kind: kind, Project: run.project, Channel: m.Channel, SenderID: m.SenderID, ChatID: m.ChatID, IsGroup: m.IsGroup, TurnID: run.turn.ID})
	if errors.Is(err, domain.ErrTaskInvalid) {
		return domain.AppliedMarker{Effect: "rejected: " + err.Error()}, nil
	}
	if err != nil {
		return domain.AppliedMarker{}, err
	}
	// The confirmation quotes the recorded task, not the marker: what the
	// user reads is what will happen.
	run.confirm = append(run.confirm, i18n.Text(run.lang, key, task.Description, h.when(task.Due)))
	for _, e := range existing {
		if e.ID != id && domain.SimilarTasks(e.Description, e.Due, task.Description, task.Due) {
			run.confirm = append(run.confirm, i18n.Text(run.lang, i18n.TaskSimilarExists, fmt.Sprintf("%s — %s [%s]", e.Description, h.when(e.Due), e.ShortID())))
		}
	}
	return domain.AppliedMarker{Effect: fmt.Sprintf("%s %s scheduled for %s", kind, domain.ShortTaskID(id), task.Due.Format(time.RFC3339)), Stream: domain.TaskStream(id)}, nil
}

func applyCancel(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, v markers.CancelTask) (domain.AppliedMarker, error) {
	prefix := v.IDPrefix
	row, found, err := h.FindTask(ctx, run.sender, prefix)
	if err != nil {
		return domain.AppliedMarker{}, err
	}
	if found != effects.TaskFound {
		run.confirm = append(run.confirm, i18n.Text(run.lang, i18n.TaskNotFound, prefix))
		return domain.AppliedMarker{Effect: "no single task matches " + prefix}, nil
	}
	task, err := h.CancelTask(ctx, md, row.ID, "marker")
	if errors.Is(err, domain.ErrTaskNotPending) {
		run.confirm = append(run.confirm, i18n.Text(run.lang, i18n.TaskNotFound, prefix))
		return domain.AppliedMarker{Effect: "task " + row.ShortID() + " not pending", Stream: domain.TaskStream(row.ID)}, nil
	}
	if err != nil {
		return domain.AppliedMarker{}, err
	}
	run.confirm = append(run.confirm, i18n.Text(run.lang, i18n.TaskCancelled, task.Description))
	return domain.AppliedMarker{Effect: "cancelled " + row.ShortID(), Stream: domain.TaskStream(row.ID)}, nil
}

func applyUpdate(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, u markers.UpdateTask) (domain.AppliedMarker, error) {
	row, found, err := h.FindTask(ctx, run.sender, u.IDPrefix)
	if err != nil {
		return domain.AppliedMarker{}, err
	}
	if found != effects.TaskFound {
		run.confirm = append(run.confirm, i18n.Text(run.lang, i18n.TaskNotFound, u.IDPrefix))
		return domain.AppliedMarker{Effect: "no single task matches " + u.IDPrefix}, nil
	}
	due := u.Due
	if !due.IsZero() {
		due = due.UTC()
	}
	task, err := h.UpdateTask(ctx, md, domain.TaskUpdated{ID: row.ID, Description: u.Description, Due: due, Repeat: string(u.Repeat), TurnID: run.turn.ID})
	if errors.Is(err, domain.ErrTaskNotPending) {
		run.confirm = append(run.confirm, i18n.Text(run.lang, i18n.TaskNotFound, u.IDPrefix))
		return domain.AppliedMarker{Effect: "task " + row.ShortID() + " not pending", Stream: domain.TaskStream(row.ID)}, nil
	}
	if err != nil {
		return domain.AppliedMarker{}, err
	}
	run.confirm = append(run.confirm, i18n.Text(run.lang, i18n.TaskUpdated, fmt.Sprintf("%s — %s", task.Description, h.when(task.Due))))
	return domain.AppliedMarker{Effect: "updated " + row.ShortID(), Stream: domain.TaskStream(row.ID)}, nil
}
