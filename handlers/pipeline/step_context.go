package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/learning"
	"github.com/omega-gateway/omega/domain/promptctx"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/handlers/skills"
	"golang.org/x/sync/errgroup"
)

func (d *Driver) addContext(ctx context.Context, st *turnState, profile sender.SenderProfile, log *slog.Logger) error {
	sessions, err := d.chatSessions(ctx, st.Received, profile)
	if err != nil {
		return err
	}
	gathered, err := d.gatherContext(ctx, st, profile, sessions)
	if err != nil {
		return err
	}
	built := promptctx.Assemble(gathered)
	if err := d.closeStaleSession(ctx, st, sessions, built); err != nil {
		return err
	}
	if err := d.recordContext(ctx, st, built); err != nil {
		return err
	}
	d.snapshotImages(ctx, st, log)
	return nil
}

func (d *Driver) language(st *turnState, profile sender.SenderProfile) string {
	if profile.Language != "" {
		return i18n.OrDefault(profile.Language)
	}
	return i18n.Detect(st.Received.Text)
}

// recentSummaries is how many past conversations' summaries a context
// recalls, as the seed's get_all_recent_summaries(3).
const recentSummaries = 3

// conversation returns the conversation a turn belongs to and its
// history: the chat's last one while it is active, else a new one named
// after the turn.
func (d *Driver) conversation(ctx context.Context, chat, project string, now time.Time, turnID string) (string, []turn.HistoryMessage, error) {
	c, ok, err := d.Read.RecentConversation(ctx, chat, project, d.Config.HistoryLimit)
	if err != nil {
		return "", nil, err
	}
	if !ok || now.Sub(c.LastAt) >= d.Config.ConversationIdle {
		return turnID, nil, nil
	}
	return c.ID, c.History, nil
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

// pendingTasks lists the sender's scheduled tasks for the prompt; in a
// group only those set for that group, since its session is shared.
func (d *Driver) pendingTasks(ctx context.Context, m *turn.MessageReceived) ([]promptctx.Task, error) {
	rows, err := d.Read.SenderTasks(ctx, sender.SenderKey(m.Channel, m.SenderID), true)
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
func (d *Driver) learning(ctx context.Context, snd, project string) (lessons, outcomes []string, err error) {
	var l learning.Learning
	if _, err := eventstore.Fold(ctx, d.Store, d.Registry, learning.LearningStream(snd), &l); err != nil {
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

// gatherContext reads what a turn's context is assembled from (see
// promptctx.Assemble): the conversation and its summaries, the sender's
// tasks and learning, the projects, skills and prompts. The conversation
// and its summaries are the chat's: a group turn reads only that group's.
func (d *Driver) gatherContext(ctx context.Context, st *turnState, profile sender.SenderProfile, sessions map[string]string) (promptctx.Gathered, error) {
	m := st.Received
	g := promptctx.Gathered{
		TurnID: st.ID, Received: m, Profile: profile,
		Language: d.language(st, profile), Now: d.now(), Location: d.Config.Location,
		Session:      sessions[profile.ActiveProject],
		PlatformHint: d.formatHint(m.Channel),
		ModelFast:    d.Config.ModelFast, ModelComplex: d.Config.ModelComplex,
	}
	chat := m.Chat().Key()
	// The sender's tasks and the conversation are independent reads: one
	// round trip's wait instead of two before the provider is called.
	var reading errgroup.Group
	reading.Go(func() (err error) {
		g.Tasks, err = d.pendingTasks(ctx, m)
		return err
	})
	// A conversation continues while it is active; after the idle time the
	// next message starts a new one. The choice is recorded, so a replay
	// never depends on the configuration of the day.
	var err error
	g.ConversationID, g.History, err = d.conversation(ctx, chat, profile.ActiveProject, g.Now, st.ID)
	if err := errors.Join(err, reading.Wait()); err != nil {
		return g, err
	}
	if err := d.gatherPrompt(ctx, &g); err != nil {
		return g, err
	}
	message, _ := promptctx.UserMessage(m)
	project := promptctx.ProjectOf(m, profile)
	if g.Lessons, g.Outcomes, err = d.learning(ctx, sender.SenderKey(m.Channel, m.SenderID), project); err != nil {
		return g, err
	}
	g.Summaries, err = d.summaries(ctx, chat, project, message, g.ConversationID == st.ID)
	return g, err
}

// gatherPrompt reads the projects and skills and picks the prompt set
// that speaks of them.
func (d *Driver) gatherPrompt(ctx context.Context, g *promptctx.Gathered) error {
	var err error
	if g.Projects, err = d.knownProjects(ctx); err != nil {
		return err
	}
	_, clean := promptctx.UserMessage(g.Received)
	sk, err := d.skillsFor(ctx, clean.Text)
	if err != nil {
		return err
	}
	g.Skills, g.MatchedSkills, g.MCPServers = sk.lines, sk.texts(), skills.ServerNames(sk.matched)
	set, caps := d.turnPrompts(g.Projects, len(sk.lines) > 0)
	g.Prompts, g.Sandbox, g.Capabilities = set.Sections(), set.Sandbox(d.Config.Sandbox), caps
	return nil
}
