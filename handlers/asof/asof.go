// Package asof answers what omega knew about a sender at any moment:
// facts, language, personality, active project, provider session, tasks
// with their next due times, heartbeat checklist and open conversation.
// Everything is folded from the log by the folds the turn itself uses
// (the sender's profile through the same service, each stream by its
// aggregate), stopped at the moment; read models only name the streams to
// fold. No snapshot is kept: see docs/BENCHMARKS.md for what it costs.
package asof

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/omega-gateway/omega/domain"
	heartbeatdom "github.com/omega-gateway/omega/domain/heartbeat"
	"github.com/omega-gateway/omega/domain/promptctx"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/task"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
)

// Moment is a point in the log's history: the events recorded at or
// before At (strictly before it when Before is set, which is how a turn's
// own context step saw the log).
type Moment struct {
	At     time.Time
	Before bool
}

// Keep reports whether an event had been recorded by the moment.
func (m Moment) Keep(e domain.Event) bool {
	if m.Before {
		return e.RecordedAt.Before(m.At)
	}
	return !e.RecordedAt.After(m.At)
}

// State is what omega knew about a sender at a moment.
type State struct {
	Sender  string    `json:"sender"`  // channel:id asked about
	Profile string    `json:"profile"` // channel:id whose profile it uses (a linked identity)
	At      time.Time `json:"at"`
	// Known: the sender had been greeted or had a profile event.
	Known bool   `json:"known"`
	Name  string `json:"name,omitempty"`
	// Facts are key and value, sorted by key.
	Facts [][2]string `json:"facts"`
	// Language is the sender's chosen language; "" when none was chosen
	// (each message's own language is used).
	Language    string `json:"language,omitempty"`
	Personality string `json:"personality,omitempty"`
	Project     string `json:"project,omitempty"`
	// Session is the provider session kept for the active project.
	Session      string        `json:"session,omitempty"`
	Tasks        []Task        `json:"tasks"`
	Heartbeat    []Checklist   `json:"heartbeat"`
	Conversation *Conversation `json:"conversation,omitempty"`
	// Next is what a message at this moment would have been given.
	Next Next `json:"next"`
}

// Next is what a message arriving at the moment would have continued.
type Next struct {
	// ConversationID is the conversation it joins ("": it starts one).
	ConversationID string `json:"conversation_id,omitempty"`
	// Session is the provider session it resumes ("": a fresh one).
	Session string `json:"session,omitempty"`
}

// Task is a task pending at the moment, with its next due time then.
type Task struct {
	ID          string    `json:"id"`
	Description string    `json:"description"`
	Kind        string    `json:"kind"`
	Repeat      string    `json:"repeat"`
	Project     string    `json:"project,omitempty"`
	Due         time.Time `json:"due"`
}

// Checklist is one heartbeat scope's checklist at the moment.
type Checklist struct {
	Scope      string   `json:"scope"`
	Items      []string `json:"items"`
	Interval   int      `json:"interval_minutes,omitempty"` // 0: the configured default
	Suppressed []string `json:"suppressed,omitempty"`
}

// Profiles loads a sender's profile as it stood (senders.Service).
type Profiles interface {
	LoadUntil(ctx context.Context, channel, senderID string, keep func(domain.Event) bool) (sender.SenderProfile, sender.SenderRef, error)
}

// Index names the streams a sender's state is folded from
// (projections.Queries).
type Index interface {
	SenderTasksAt(ctx context.Context, snd string, at time.Time) ([]string, error)
	SenderTurnsBefore(ctx context.Context, snd string, by time.Time, limit, skip int) ([]string, error)
}

// Reader folds the state of a moment.
type Reader struct {
	Store    eventstore.Store
	Registry *domain.Registry
	Profiles Profiles
	Index    Index
	// Current, when set, waits until the read models behind Index show
	// every event committed so far: they are applied after the log, by
	// another process perhaps, and a turn they have not shown yet would be
	// missing from a moment just past. Nil when the caller brought them up
	// to date itself (a tool that caught up).
	Current func(ctx context.Context) error
	// Idle is OMEGA_CONVERSATION_IDLE: a conversation idle this long is
	// not continued.
	Idle time.Duration
	// Messages bounds the conversation's messages shown (default 6).
	Messages int
}

// New checks a reader's collaborators.
func New(r Reader) (*Reader, error) {
	if r.Store == nil || r.Registry == nil || r.Profiles == nil || r.Index == nil || r.Idle <= 0 {
		return nil, errors.New("asof: needs a store, registry, profiles, index and the conversation idle time")
	}
	if r.Messages <= 0 {
		r.Messages = 6
	}
	return &r, nil
}

// currentWait bounds the wait for the read models to show the log.
const currentWait = 5 * time.Second

// At returns what omega knew about who at the moment.
func (r *Reader) At(ctx context.Context, who sender.SenderRef, at Moment) (State, error) {
	if r.Current != nil {
		wctx, cancel := context.WithTimeout(ctx, currentWait)
		err := r.Current(wctx)
		cancel()
		if err != nil {
			return State{}, fmt.Errorf("the state of %s: %w", label(who), err)
		}
	}
	profile, ref, err := r.Profiles.LoadUntil(ctx, who.Channel, who.ID, at.Keep)
	if err != nil {
		return State{}, fmt.Errorf("the profile of %s: %w", label(who), err)
	}
	st := State{Sender: label(who), Profile: label(ref), At: at.At, Known: profile.Version > 0, Name: profile.Name,
		Facts: profile.SortedFacts(), Personality: profile.Personality, Project: profile.ActiveProject,
		Session: profile.Sessions[profile.ActiveProject]}
	if profile.Language != "" {
		st.Language = promptctx.ReplyLanguage(profile, "")
	}
	if st.Tasks, err = r.tasks(ctx, who, at); err != nil {
		return st, err
	}
	if st.Heartbeat, err = r.checklists(ctx, st.Project, at); err != nil {
		return st, err
	}
	if st.Conversation, err = r.conversation(ctx, who.Key(), st.Project, at); err != nil {
		return st, err
	}
	if c := st.Conversation; c != nil && !c.Closed && promptctx.ConversationContinues(c.LastAt, at.At, r.Idle) {
		st.Next = Next{ConversationID: c.ID, Session: st.Session}
	}
	return st, nil
}

// TurnMoment is the moment a turn built its context (just before it), or
// its arrival when it built none: asked at that moment, At answers what
// the turn saw.
func (r *Reader) TurnMoment(ctx context.Context, turnID string) (Moment, error) {
	evs, err := r.Store.Load(ctx, domain.TurnStream(turnID), 1)
	if err != nil {
		return Moment{}, fmt.Errorf("load turn %s: %w", turnID, err)
	}
	if len(evs) == 0 {
		return Moment{}, fmt.Errorf("no turn %s", turnID)
	}
	for _, e := range evs {
		if e.Type == (turn.ContextBuilt{}).EventType() {
			return Moment{At: e.RecordedAt, Before: true}, nil
		}
	}
	return Moment{At: evs[0].RecordedAt}, nil
}

// tasks are the sender's tasks pending at the moment, soonest first.
func (r *Reader) tasks(ctx context.Context, who sender.SenderRef, at Moment) ([]Task, error) {
	ids, err := r.Index.SenderTasksAt(ctx, who.Key(), at.At)
	if err != nil {
		return nil, err
	}
	out := []Task{}
	for _, id := range ids {
		var t task.Task
		if _, err := eventstore.FoldUntil(ctx, r.Store, r.Registry, task.TaskStream(id), &t, at.Keep); err != nil {
			return nil, err
		}
		if t.Status != task.TaskStatusPending {
			continue
		}
		out = append(out, Task{ID: t.ID, Description: t.Description, Kind: t.Kind, Repeat: t.Repeat, Project: t.Project, Due: t.Due})
	}
	slices.SortFunc(out, func(a, b Task) int { return a.Due.Compare(b.Due) })
	return out, nil
}

// checklists are the global heartbeat checklist and the active project's.
func (r *Reader) checklists(ctx context.Context, project string, at Moment) ([]Checklist, error) {
	scopes := []string{heartbeatdom.GlobalHeartbeat}
	if project != "" {
		scopes = append(scopes, project)
	}
	out := make([]Checklist, 0, len(scopes))
	for _, scope := range scopes {
		var h heartbeatdom.Heartbeat
		if _, err := eventstore.FoldUntil(ctx, r.Store, r.Registry, heartbeatdom.HeartbeatStream(scope), &h, at.Keep); err != nil {
			return nil, err
		}
		out = append(out, Checklist{Scope: scope, Items: nonNil(h.Items), Interval: h.Interval, Suppressed: h.Suppressed})
	}
	return out, nil
}

func nonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}

func label(r sender.SenderRef) string { return r.Channel + ":" + r.ID }
