// Package gather reads what a turn's context is assembled from: the
// chat's conversation and summaries, the sender's tasks and learning, the
// projects, the skills and the prompt set that speaks of them. The
// assembly itself is pure and lives in the domain (promptctx.Assemble);
// this is the step's reads, kept apart so the driver only decides.
package gather

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/catalog"
	"github.com/omega-gateway/omega/domain/promptctx"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/handlers/skills"
	"github.com/omega-gateway/omega/projections"
	"github.com/omega-gateway/omega/prompts"
	"golang.org/x/sync/errgroup"
)

// Reads is the read model a context is gathered from
// (projections.Queries).
type Reads interface {
	RecentConversation(ctx context.Context, snd, project string, limit int) (projections.RecentConversation, bool, error)
	RecentSummaries(ctx context.Context, snd, project string, limit int) ([]string, error)
	SenderTasks(ctx context.Context, snd string, pendingOnly bool) ([]projections.TaskRow, error)
}

// Skills is the skill library (skills.Library): its files imported, then
// its skills read from the log.
type Skills interface {
	Sync(ctx context.Context) error
	Skills(ctx context.Context) ([]skills.Skill, error)
}

// Projects gives the projects as the log records them, after importing
// what changed in their folder (package projects).
type Projects interface {
	Sync(ctx context.Context) (catalog.Projects, error)
}

// Gatherer reads a turn's context.
type Gatherer struct {
	Store    eventstore.Store // the sender's learning is folded from its stream
	Registry *domain.Registry
	Read     Reads
	Prompts  *prompts.Set
	Logger   *slog.Logger
	Skills   Skills   // nil: no skills
	Projects Projects // nil: no projects
	// Recall finds older conversations' passages for a message that asks
	// to recall (nil: none).
	Recall Recaller
	// Capabilities is what this process can do; the prompt keeps only the
	// passages about those (nil: the prompt as written).
	Capabilities *prompts.Capabilities
	Sandbox      string // the provider's sandbox mode
	// HistoryLimit bounds the conversation's messages; a conversation
	// idle for ConversationIdle ends, and the next message starts one.
	HistoryLimit     int
	ConversationIdle time.Duration
}

// New checks a gatherer's collaborators: the store, registry, read model,
// prompts and logger are required.
func New(g Gatherer) (*Gatherer, error) {
	if g.Store == nil || g.Registry == nil || g.Read == nil || g.Prompts == nil || g.Logger == nil {
		return nil, errors.New("gather: needs a store, registry, read model, prompts and logger")
	}
	return &g, nil
}

// Gather completes base, which carries what the driver knows of the turn
// (its id, message, profile, language, clock, session, platform hint and
// models), with what the context reads. The conversation and its
// summaries are the chat's: a group turn reads only that group's.
func (g *Gatherer) Gather(ctx context.Context, base promptctx.Gathered) (promptctx.Gathered, error) {
	out := base
	m := out.Received
	chat := m.Chat().Key()
	// The sender's tasks and the conversation are independent reads: one
	// round trip's wait instead of two before the provider is called.
	var reading errgroup.Group
	reading.Go(func() (err error) {
		out.Tasks, err = g.pendingTasks(ctx, m)
		return err
	})
	// A conversation continues while it is active; after the idle time the
	// next message starts a new one. The choice is recorded, so a replay
	// never depends on the configuration of the day.
	var err error
	out.ConversationID, out.History, err = g.conversation(ctx, chat, out.Profile.ActiveProject, out.Now, out.TurnID)
	if err := errors.Join(err, reading.Wait()); err != nil {
		return out, err
	}
	if err := g.prompt(ctx, &out); err != nil {
		return out, err
	}
	message, _ := promptctx.UserMessage(m)
	project := promptctx.ProjectOf(m, out.Profile)
	if out.Lessons, out.Outcomes, err = g.learning(ctx, sender.SenderKey(m.Channel, m.SenderID), project); err != nil {
		return out, err
	}
	out.Summaries, err = g.summaries(ctx, chat, project, message, out.ConversationID == out.TurnID)
	out.Recalled = g.recalled(ctx, chat, out.ConversationID, message)
	return out, err
}

// prompt reads the projects and skills and picks the prompt set that
// speaks of them.
func (g *Gatherer) prompt(ctx context.Context, out *promptctx.Gathered) error {
	var err error
	if out.Projects, err = g.knownProjects(ctx); err != nil {
		return err
	}
	_, clean := promptctx.UserMessage(out.Received)
	sk, err := g.skillsFor(ctx, clean.Text)
	if err != nil {
		return err
	}
	out.Skills, out.MatchedSkills, out.MCPServers = sk.lines, sk.texts(), skills.ServerNames(sk.matched)
	set, caps := g.turnPrompts(out.Projects, len(sk.lines) > 0)
	out.Prompts, out.Sandbox, out.Capabilities = set.Sections(), set.Sandbox(g.Sandbox), caps
	return nil
}

// conversation returns the conversation a turn belongs to and its
// history: the chat's last one while it is active, else a new one named
// after the turn.
func (g *Gatherer) conversation(ctx context.Context, chat, project string, now time.Time, turnID string) (string, []turn.HistoryMessage, error) {
	c, ok, err := g.Read.RecentConversation(ctx, chat, project, g.HistoryLimit)
	if err != nil {
		return "", nil, err
	}
	if !ok || !promptctx.ConversationContinues(c.LastAt, now, g.ConversationIdle) {
		return turnID, nil, nil
	}
	return c.ID, c.History, nil
}

// pendingTasks lists the sender's scheduled tasks for the prompt; in a
// group only those set for that group, since its session is shared.
func (g *Gatherer) pendingTasks(ctx context.Context, m *turn.MessageReceived) ([]promptctx.Task, error) {
	rows, err := g.Read.SenderTasks(ctx, sender.SenderKey(m.Channel, m.SenderID), true)
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
