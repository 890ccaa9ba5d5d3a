package handlers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/markers"
)

// WhatsAppPairing sends a WhatsApp pairing QR code to a chat.
type WhatsAppPairing interface {
	SendQR(ctx context.Context, channel, chatID string) error
}

// Markers is the ReplyHook that applies the provider's markers as events
// and returns the reply without them, followed by the task confirmation.
type Markers struct {
	Effects
	Location *time.Location
	WhatsApp WhatsAppPairing // nil: WhatsApp is not enabled
	Logger   *slog.Logger
}

// markerOrder is the seed's processing order; markers it does not list
// keep their written order after the listed ones.
var markerOrder = []string{
	markers.NameSchedule, markers.NameScheduleAction, markers.NameCancelTask, markers.NameUpdateTask,
	markers.NameProjectActivate, markers.NameProjectDeactivate, markers.NameWhatsAppQR,
	markers.NameLangSwitch, markers.NamePersonality, markers.NameForgetConversation, markers.NamePurgeFacts,
	markers.NameHeartbeatAdd, markers.NameHeartbeatRemove, markers.NameHeartbeatInterval,
	markers.NameHeartbeatSuppressSection, markers.NameHeartbeatUnsuppressSection, markers.NameHeartbeatOK,
	markers.NameLimitation, markers.NameSelfHeal, markers.NameSelfHealResolved,
}

func rank(name string) int {
	if i := slices.Index(markerOrder, name); i >= 0 {
		return i
	}
	return len(markerOrder)
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
func (h *Markers) Process(ctx context.Context, turn *domain.Turn, raw string, step int) (Processed, error) {
	res := markers.ParseIn(raw, h.Location)
	m := turn.Received
	run := &markerRun{turn: turn, step: step, sender: m.Channel + "-" + m.SenderID}
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

	senders := Senders{Store: h.Store, Registry: h.Registry}
	profile, err := senders.Load(ctx, m.Channel, m.SenderID)
	if err != nil {
		return Processed{}, err
	}
	run.profile = profile
	run.lang = h.language(turn, profile)
	for _, x := range list {
		md := domain.Metadata{CorrelationID: turn.ID, CausationID: fmt.Sprintf("%s/s%d/m%d", turn.ID, step, x.i),
			Channel: m.Channel, Sender: m.SenderID, Project: run.project}
		am, err := h.apply(ctx, run, md, x.m)
		if err != nil {
			return Processed{}, fmt.Errorf("apply %s: %w", x.m.Name(), err)
		}
		am.Name = x.m.Name()
		run.applied = append(run.applied, am)
	}
	for _, inv := range res.Invalid {
		run.applied = append(run.applied, domain.AppliedMarker{Name: inv.Name, Effect: "rejected: " + inv.Reason})
	}
	out := Processed{Text: res.Text}
	if len(run.confirm) > 0 {
		out.Text = strings.TrimSpace(out.Text + "\n\n" + strings.Join(run.confirm, "\n"))
	}
	if len(run.applied) > 0 {
		out.Events = append(out.Events, domain.MarkersApplied{Step: step, Markers: run.applied})
	}
	out.Events = append(out.Events, run.events...)
	return out, nil
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
	m := run.turn.Received
	senderStream := domain.SenderStream(m.Channel, m.SenderID)
	onSender := func(decide func(domain.SenderProfile) []domain.Payload, effect string) (domain.AppliedMarker, error) {
		p := &Profile{}
		done, err := h.once(ctx, senderStream, md, func() Folder { p = &Profile{}; return p },
			func() ([]domain.Payload, error) { return decide(p.SenderProfile), nil })
		if err != nil {
			return domain.AppliedMarker{}, err
		}
		run.profile = p.SenderProfile
		if done {
			effect += " (already recorded)"
		}
		return domain.AppliedMarker{Effect: effect, Stream: senderStream}, nil
	}
	switch v := mk.(type) {
	case markers.Schedule:
		return h.schedule(ctx, run, md, v)
	case markers.CancelTask:
		return h.cancel(ctx, run, md, v.IDPrefix)
	case markers.UpdateTask:
		return h.update(ctx, run, md, v)
	case markers.ProjectActivate:
		return onSender(func(p domain.SenderProfile) []domain.Payload {
			if p.ActiveProject == v.Project {
				return nil
			}
			return []domain.Payload{domain.ProjectActivated{Project: v.Project}}
		}, "project "+v.Project+" active")
	case markers.ProjectDeactivate:
		return onSender(func(p domain.SenderProfile) []domain.Payload {
			if p.ActiveProject == "" {
				return nil
			}
			return []domain.Payload{domain.ProjectDeactivated{Project: p.ActiveProject}}
		}, "no project active")
	case markers.WhatsAppQR:
		if h.WhatsApp == nil {
			return domain.AppliedMarker{Effect: "whatsapp not enabled"}, nil
		}
		if err := h.WhatsApp.SendQR(ctx, m.Channel, m.ChatID); err != nil {
			h.Logger.Warn("whatsapp pairing failed", "turn", run.turn.ID, "err", err)
			return domain.AppliedMarker{Effect: "whatsapp pairing failed: " + err.Error()}, nil
		}
		return domain.AppliedMarker{Effect: "qr sent"}, nil
	case markers.LangSwitch:
		lang := v.Language
		if l, ok := i18n.Normalize(lang); ok {
			lang = l
		}
		am, err := onSender(func(p domain.SenderProfile) []domain.Payload { return p.SwitchLanguage(lang) }, "language "+lang)
		run.lang = h.language(run.turn, run.profile)
		return am, err
	case markers.Personality:
		return onSender(func(p domain.SenderProfile) []domain.Payload { return p.SetPersonality(v.Style) }, "personality set")
	case markers.PurgeFacts:
		return onSender(func(p domain.SenderProfile) []domain.Payload { return p.PurgeFacts() }, "facts purged")
	case markers.ForgetConversation:
		am, err := onSender(func(p domain.SenderProfile) []domain.Payload { return p.ClearSession(run.project, "forget") }, "conversation closed, session cleared")
		if err == nil && !run.forgot && run.turn.Context != nil {
			run.forgot = true
			run.events = append(run.events, domain.ConversationClosed{ConversationID: run.turn.Context.ConversationID, Sender: run.sender, Project: run.project})
		}
		return am, err
	case markers.HeartbeatAdd, markers.HeartbeatRemove, markers.HeartbeatInterval,
		markers.HeartbeatSuppressSection, markers.HeartbeatUnsuppressSection:
		return h.heartbeat(ctx, run, md, mk)
	case markers.HeartbeatOK:
		return domain.AppliedMarker{Effect: "nothing to report"}, nil
	case markers.Limitation:
		return h.onStream(ctx, md, domain.LimitationsStream, &domain.Limitations{}, "limitation "+v.Title, func(f Folder) []domain.Payload {
			return f.(timeFolder).s.(*domain.Limitations).Report(v.Title, v.Description, v.Plan)
		})
	case markers.SelfHeal:
		return h.onStream(ctx, md, domain.SelfHealStream, &domain.SelfHeal{}, "self-heal", func(f Folder) []domain.Payload {
			return f.(timeFolder).s.(*domain.SelfHeal).Heal(v.Description, v.Verification)
		})
	case markers.SelfHealResolved:
		return h.onStream(ctx, md, domain.SelfHealStream, &domain.SelfHeal{}, "self-heal resolved", func(f Folder) []domain.Payload {
			return f.(timeFolder).s.(*domain.SelfHeal).Resolve()
		})
	case markers.BugReport:
		return h.onStream(ctx, md, domain.BugReportsStream, &domain.Skill{}, "bug reported", func(Folder) []domain.Payload {
			return []domain.Payload{domain.BugReported{Description: v.Description, Sender: run.sender}}
		})
	case markers.SkillImprove:
		return h.onStream(ctx, md, domain.SkillStream(v.Skill), &domain.Skill{}, "skill lesson for "+v.Skill, func(f Folder) []domain.Payload {
			return f.(timeFolder).s.(*domain.Skill).Improve(v.Skill, v.Lesson)
		})
	case markers.ActionOutcome:
		return h.onStream(ctx, md, domain.LearningStream(run.sender), &domain.Learning{}, "outcome recorded", func(Folder) []domain.Payload {
			return []domain.Payload{domain.ActionOutcomeRecorded{Outcome: v.Outcome, Project: run.project}}
		})
	case markers.Reward:
		return h.onStream(ctx, md, domain.LearningStream(run.sender), &domain.Learning{}, fmt.Sprintf("reward %+d", v.Score), func(Folder) []domain.Payload {
			return []domain.Payload{domain.RewardRecorded{Score: v.Score, Domain: v.Domain, Lesson: v.Lesson, Project: run.project}}
		})
	case markers.Lesson:
		return h.onStream(ctx, md, domain.LearningStream(run.sender), &domain.Learning{}, "lesson learned", func(f Folder) []domain.Payload {
			return f.(timeFolder).s.(*domain.Learning).Learn(v.Domain, v.Rule, run.project)
		})
	case markers.Silent:
		return domain.AppliedMarker{Effect: "silent"}, nil
	}
	return domain.AppliedMarker{Effect: "ignored"}, nil
}

// aggregate is a domain state folded with its recording time.
type aggregate interface {
	Apply(p domain.Payload, version int64, at time.Time)
}

// onStream applies a decision on one of the agent's own streams.
func (h *Markers) onStream(ctx context.Context, md domain.Metadata, stream string, zero aggregate, effect string, decide func(Folder) []domain.Payload) (domain.AppliedMarker, error) {
	var f Folder
	var decided int
	done, err := h.once(ctx, stream, md, func() Folder { f = timeFolder{freshLike(zero)}; return f },
		func() ([]domain.Payload, error) { ps := decide(f); decided = len(ps); return ps, nil })
	switch {
	case err != nil:
		return domain.AppliedMarker{}, err
	case !done && decided == 0:
		effect += ": nothing new"
	}
	return domain.AppliedMarker{Effect: effect, Stream: stream}, nil
}

// freshLike returns a new zero value of the aggregate's type.
func freshLike(a aggregate) aggregate {
	switch a.(type) {
	case *domain.Limitations:
		return &domain.Limitations{}
	case *domain.SelfHeal:
		return &domain.SelfHeal{}
	case *domain.Learning:
		return &domain.Learning{}
	case *domain.Heartbeat:
		return &domain.Heartbeat{}
	}
	return &domain.Skill{}
}

func (h *Markers) heartbeat(ctx context.Context, run *markerRun, md domain.Metadata, mk markers.Marker) (domain.AppliedMarker, error) {
	scope := cmp.Or(run.project, domain.GlobalHeartbeat)
	stream := domain.HeartbeatStream(scope)
	var decideErr error
	am, err := h.onStream(ctx, md, stream, &domain.Heartbeat{}, "checklist "+scope, func(f Folder) []domain.Payload {
		hb := f.(timeFolder).s.(*domain.Heartbeat)
		switch v := mk.(type) {
		case markers.HeartbeatAdd:
			return hb.Add(v.Item)
		case markers.HeartbeatRemove:
			return hb.Remove(v.Item)
		case markers.HeartbeatInterval:
			ps, err := hb.SetInterval(v.Minutes)
			decideErr = err
			return ps
		case markers.HeartbeatSuppressSection:
			return hb.Suppress(v.Section)
		case markers.HeartbeatUnsuppressSection:
			return hb.Unsuppress(v.Section)
		}
		return nil
	})
	if decideErr != nil {
		return domain.AppliedMarker{Effect: "rejected: " + decideErr.Error(), Stream: stream}, err
	}
	if v, ok := mk.(markers.HeartbeatInterval); ok && err == nil {
		run.confirm = append(run.confirm, i18n.Text(run.lang, i18n.HeartbeatInterval, v.Minutes))
	}
	return am, err
}

func (h *Markers) schedule(ctx context.Context, run *markerRun, md domain.Metadata, s markers.Schedule) (domain.AppliedMarker, error) {
	m := run.turn.Received
	kind, key := domain.TaskKindReminder, i18n.TaskScheduled
	if s.Action {
		kind, key = domain.TaskKindAction, i18n.ActionScheduled
	}
	id := TaskID(md.CausationID)
	existing, err := h.Read.SenderTasks(ctx, run.sender, true)
	if err != nil {
		return domain.AppliedMarker{}, err
	}
	task, err := h.scheduleTask(ctx, md, domain.TaskScheduled{ID: id, Description: s.Description, Due: s.Due.UTC(), Repeat: string(s.Repeat),
		Kind: kind, Project: run.project, Channel: m.Channel, SenderID: m.SenderID, ChatID: m.ChatID, TurnID: run.turn.ID})
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
	return domain.AppliedMarker{Effect: fmt.Sprintf("%s %s scheduled for %s", kind, ShortTaskID(id), task.Due.Format(time.RFC3339)), Stream: domain.TaskStream(id)}, nil
}

func (h *Markers) cancel(ctx context.Context, run *markerRun, md domain.Metadata, prefix string) (domain.AppliedMarker, error) {
	row, found, err := h.findTask(ctx, run.sender, prefix)
	if err != nil {
		return domain.AppliedMarker{}, err
	}
	if found != taskFound {
		run.confirm = append(run.confirm, i18n.Text(run.lang, i18n.TaskNotFound, prefix))
		return domain.AppliedMarker{Effect: "no single task matches " + prefix}, nil
	}
	task, err := h.cancelTask(ctx, md, row.ID, "marker")
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

func (h *Markers) update(ctx context.Context, run *markerRun, md domain.Metadata, u markers.UpdateTask) (domain.AppliedMarker, error) {
	row, found, err := h.findTask(ctx, run.sender, u.IDPrefix)
	if err != nil {
		return domain.AppliedMarker{}, err
	}
	if found != taskFound {
		run.confirm = append(run.confirm, i18n.Text(run.lang, i18n.TaskNotFound, u.IDPrefix))
		return domain.AppliedMarker{Effect: "no single task matches " + u.IDPrefix}, nil
	}
	due := u.Due
	if !due.IsZero() {
		due = due.UTC()
	}
	task, err := h.updateTask(ctx, md, domain.TaskUpdated{ID: row.ID, Description: u.Description, Due: due, Repeat: string(u.Repeat), TurnID: run.turn.ID})
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
