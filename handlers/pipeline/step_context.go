package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
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
	"github.com/omega-gateway/omega/handlers/skills"
)

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

func (d *Driver) language(st *turnState, profile domain.SenderProfile) string {
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
