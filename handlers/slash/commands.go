// Package slash answers bot commands (/help, /tasks, /forget...) from the
// read models and aggregates, without a provider call; commands that
// change something record events.
package slash

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/commands"
	"github.com/omega-gateway/omega/domain/heartbeat"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/learning"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/task"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/handlers/effects"
	"github.com/omega-gateway/omega/handlers/pipeline"
	"github.com/omega-gateway/omega/handlers/senders"
	"github.com/omega-gateway/omega/handlers/skills"
	"github.com/omega-gateway/omega/projections"
)

// StatusInfo is what /status reports about the process.
type StatusInfo struct {
	Provider, Model, Store, Sandbox string
	Channels                        []string
}

// WhatsAppPairing sends a WhatsApp pairing QR code to a chat.
type WhatsAppPairing interface {
	SendQR(ctx context.Context, channel, chatID string) error
}

// Commands is the CommandHook answering bot commands from the read models
// and aggregates; commands that change something record events.
type Commands struct {
	effects.Recorder
	WhatsApp WhatsAppPairing // nil: WhatsApp is not enabled
	Access   AccessCommands  // nil: no /pair and /link
	// BotName returns the bot\'s @name (known once Telegram has started),
	// so that "/cmd@name" is ours and "/cmd@other" is not.
	BotName  func() string
	Location *time.Location
	Started  time.Time
	DataDir  string          // holds projects/ and skills/
	Skills   *skills.Library // nil: no skills
	Status   StatusInfo
	// Projects gives the projects as the log records them; nil: the
	// folders of DataDir/projects.
	Projects ProjectCatalog
	Now      func() time.Time
	// HeartbeatNext says when a scope's next check-in falls due; false
	// when the heartbeat does not run. nil: not reported.
	HeartbeatNext func(ctx context.Context, scope string) (time.Time, bool)
	// HeartbeatMinutes is the configured interval (0: 30).
	HeartbeatMinutes int
}

// New checks a Commands hook's collaborators: the recorder is required;
// a nil Location means UTC.
func New(c Commands) (*Commands, error) {
	if c.Store() == nil {
		return nil, errors.New("slash: commands need an effects recorder")
	}
	if c.Location == nil {
		c.Location = time.UTC
	}
	return &c, nil
}

// DefaultHeartbeatMinutes is the interval reported while none was set.
const DefaultHeartbeatMinutes = 30

func (c *Commands) IsCommand(text string) bool {
	_, ok := commands.Parse(text, c.botName())
	return ok
}

// cmdCall is one command being answered.
type cmdCall struct {
	turn    *turn.Turn
	profile sender.SenderProfile
	lang    string
	sender  string
	md      domain.Metadata
	events  []domain.Payload
}

func (c *Commands) Answer(ctx context.Context, tn *turn.Turn, profile sender.SenderProfile) (pipeline.CommandAnswer, error) {
	cmd, _ := commands.Parse(tn.Received.Text, c.botName())
	m := tn.Received
	call := &cmdCall{turn: tn, profile: profile, lang: commandLanguage(tn, profile), sender: sender.SenderKey(m.Channel, m.SenderID),
		md: domain.Metadata{CorrelationID: tn.ID, CausationID: tn.ID + "/command", Channel: m.Channel, Sender: m.SenderID, Project: profile.ActiveProject}}
	reply, err := c.answer(ctx, call, cmd)
	if err != nil {
		return pipeline.CommandAnswer{}, fmt.Errorf("/%s: %w", cmd.Word, err)
	}
	return pipeline.CommandAnswer{Command: cmd.Name, Reply: reply, Events: call.events}, nil
}

func commandLanguage(tn *turn.Turn, p sender.SenderProfile) string {
	if p.Language != "" {
		return i18n.OrDefault(p.Language)
	}
	return i18n.Detect(tn.Received.Text)
}

func (c *Commands) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// answerFunc answers one command; arg is what follows the command word.
type answerFunc func(c *Commands, ctx context.Context, call *cmdCall, arg string) (string, error)

// answers maps each command to its answer. A command not listed gets the
// "unknown command" text with the help.
var answers = map[string]answerFunc{
	commands.Help: func(c *Commands, _ context.Context, call *cmdCall, _ string) (string, error) {
		return c.help(call.lang), nil
	},
	commands.Status: func(c *Commands, ctx context.Context, call *cmdCall, _ string) (string, error) {
		return c.status(ctx, call)
	},
	commands.Uptime: func(c *Commands, _ context.Context, call *cmdCall, _ string) (string, error) {
		return i18n.More(call.lang, i18n.UptimeReport, c.uptime()), nil
	},
	commands.Forget: func(c *Commands, ctx context.Context, call *cmdCall, _ string) (string, error) {
		return c.forget(ctx, call)
	},
	commands.Facts: func(_ *Commands, _ context.Context, call *cmdCall, _ string) (string, error) {
		return factsAnswer(call), nil
	},
	commands.Memory: func(c *Commands, ctx context.Context, call *cmdCall, _ string) (string, error) {
		return c.memory(ctx, call)
	},
	commands.Tasks: func(c *Commands, ctx context.Context, call *cmdCall, _ string) (string, error) {
		return c.tasks(ctx, call)
	},
	commands.Cancel:      (*Commands).cancel,
	commands.Language:    (*Commands).language,
	commands.Personality: (*Commands).personality,
	commands.Purge: func(c *Commands, ctx context.Context, call *cmdCall, _ string) (string, error) {
		return c.purge(ctx, call)
	},
	commands.Projects: func(c *Commands, ctx context.Context, call *cmdCall, _ string) (string, error) {
		return c.listProjects(ctx, call)
	},
	commands.Project: (*Commands).project,
	commands.Heartbeat: func(c *Commands, ctx context.Context, call *cmdCall, _ string) (string, error) {
		return c.heartbeat(ctx, call)
	},
	commands.Learning: func(c *Commands, ctx context.Context, call *cmdCall, _ string) (string, error) {
		return c.learning(ctx, call)
	},
	commands.Skills: func(c *Commands, ctx context.Context, call *cmdCall, _ string) (string, error) {
		return c.skillsAnswer(ctx, call)
	},
	commands.WhatsApp: func(c *Commands, ctx context.Context, call *cmdCall, _ string) (string, error) {
		return c.whatsApp(ctx, call)
	},
	commands.Pair: func(c *Commands, ctx context.Context, call *cmdCall, arg string) (string, error) {
		return c.accessAnswer(ctx, call, arg, false)
	},
	commands.Link: func(c *Commands, ctx context.Context, call *cmdCall, arg string) (string, error) {
		return c.accessAnswer(ctx, call, arg, true)
	},
}

func (c *Commands) answer(ctx context.Context, call *cmdCall, cmd commands.Command) (string, error) {
	if answer, ok := answers[cmd.Name]; ok {
		return answer(c, ctx, call, cmd.Arg)
	}
	return i18n.Text(call.lang, i18n.UnknownCommand, "/"+cmd.Word) + "\n\n" + c.help(call.lang), nil
}

// help lists the commands, less those of a channel that is off.
func (c *Commands) help(lang string) string { return i18n.HelpWithout(lang, c.Hidden()...) }

// Hidden are the commands this gateway does not offer: /whatsapp while
// WhatsApp is off. Menus (Telegram's) leave them out too.
func (c *Commands) Hidden() []string {
	if c.WhatsApp == nil {
		return []string{commands.WhatsApp}
	}
	return nil
}

func factsAnswer(call *cmdCall) string {
	facts := call.profile.SortedFacts()
	if len(facts) == 0 {
		return i18n.Text(call.lang, i18n.NoFacts)
	}
	lines := make([]string, len(facts))
	for i, f := range facts {
		lines[i] = "- " + f[0] + ": " + f[1]
	}
	return i18n.More(call.lang, i18n.FactsList, strings.Join(lines, "\n"))
}

func (c *Commands) memory(ctx context.Context, call *cmdCall) (string, error) {
	convs, err := c.Read().CountConversations(ctx, call.sender)
	if err != nil {
		return "", err
	}
	msgs, err := c.Read().CountMessages(ctx, call.sender)
	if err != nil {
		return "", err
	}
	return i18n.More(call.lang, i18n.MemoryReport, convs, msgs, len(call.profile.Facts)), nil
}

func (c *Commands) personality(ctx context.Context, call *cmdCall, arg string) (string, error) {
	p, err := c.onSender(ctx, call, func(p sender.SenderProfile) []domain.Payload { return p.SetPersonality(arg) })
	if err != nil {
		return "", err
	}
	if p.Personality == "" {
		return i18n.Text(call.lang, i18n.PersonalityReset), nil
	}
	return i18n.Text(call.lang, i18n.PersonalitySet, p.Personality), nil
}

func (c *Commands) purge(ctx context.Context, call *cmdCall) (string, error) {
	if _, err := c.onSender(ctx, call, func(p sender.SenderProfile) []domain.Payload { return p.PurgeFacts() }); err != nil {
		return "", err
	}
	return i18n.Text(call.lang, i18n.FactsPurged), nil
}

func (c *Commands) whatsApp(ctx context.Context, call *cmdCall) (string, error) {
	if c.WhatsApp == nil {
		return i18n.More(call.lang, i18n.WhatsAppDisabled), nil
	}
	if err := c.WhatsApp.SendQR(ctx, call.turn.Received.Channel, call.turn.Received.ChatID); err != nil {
		return "", fmt.Errorf("send whatsapp qr: %w", err)
	}
	return i18n.More(call.lang, i18n.WhatsAppQRSent), nil
}

func (c *Commands) uptime() string {
	return c.now().Sub(c.Started).Round(time.Second).String()
}

func (c *Commands) status(ctx context.Context, call *cmdCall) (string, error) {
	tasks, err := c.Read().SenderTasks(ctx, call.sender, true)
	if err != nil {
		return "", err
	}
	convs, err := c.Read().CountConversations(ctx, call.sender)
	if err != nil {
		return "", err
	}
	s := c.Status
	return i18n.More(call.lang, i18n.StatusReport, c.uptime(), s.Provider, s.Model, strings.Join(s.Channels, ", "),
		cmp.Or(s.Sandbox, "-"), s.Store, len(call.profile.Facts), len(tasks), convs), nil
}

// onSender records a decision on the sender's profile, once per turn.
func (c *Commands) onSender(ctx context.Context, call *cmdCall, decide func(sender.SenderProfile) []domain.Payload) (sender.SenderProfile, error) {
	return c.onProfile(ctx, call, call.turn.Received.Sender(), decide)
}

// onProfile records a decision on ref's profile, once per turn.
func (c *Commands) onProfile(ctx context.Context, call *cmdCall, ref sender.SenderRef, decide func(sender.SenderProfile) []domain.Payload) (sender.SenderProfile, error) {
	profiles, err := senders.New(c.Store(), c.Registry())
	if err != nil {
		return sender.SenderProfile{}, err
	}
	stream, err := profiles.ProfileStream(ctx, ref.Channel, ref.ID)
	if err != nil {
		return sender.SenderProfile{}, err
	}
	p := &sender.SenderProfile{}
	if _, err := c.Once(ctx, stream, call.md, func() eventstore.Aggregate { p = &sender.SenderProfile{}; return p },
		func() ([]domain.Payload, error) { return decide(*p), nil }); err != nil {
		return sender.SenderProfile{}, err
	}
	return *p, nil
}

// forget closes the chat's conversation and its provider session: in a
// group the group's, which its members share.
func (c *Commands) forget(ctx context.Context, call *cmdCall) (string, error) {
	project, chat := call.profile.ActiveProject, call.turn.Received.Chat()
	if _, err := c.onProfile(ctx, call, chat, func(p sender.SenderProfile) []domain.Payload { return p.ClearSession(project, "forget") }); err != nil {
		return "", err
	}
	conv, ok, err := c.Read().RecentConversation(ctx, chat.Key(), project, 0)
	if err != nil {
		return "", err
	}
	if ok {
		call.events = append(call.events, turn.ConversationClosed{ConversationID: conv.ID, Sender: call.sender, Project: project})
	}
	return i18n.Text(call.lang, i18n.ConversationCleared), nil
}

func (c *Commands) tasks(ctx context.Context, call *cmdCall) (string, error) {
	all, err := c.Read().SenderTasks(ctx, call.sender, false)
	if err != nil {
		return "", err
	}
	loc := cmp.Or(c.Location, time.UTC)
	if l, err := time.LoadLocation(call.profile.Facts["timezone"]); err == nil && call.profile.Facts["timezone"] != "" {
		loc = l
	}
	var lines []string
	for _, t := range all {
		if state, ok := taskState(call.lang, t, time.Now()); ok {
			lines = append(lines, fmt.Sprintf("- [%s] %s — %s (%s, %s) · %s", t.ShortID(), t.Description,
				i18n.TaskText(call.lang, i18n.TaskNextDue, t.Due.In(loc).Format("Mon 2 Jan 2006 15:04 MST")), t.Repeat, t.Kind, state))
		}
	}
	if len(lines) == 0 {
		return i18n.Text(call.lang, i18n.NoTasks), nil
	}
	return i18n.More(call.lang, i18n.TasksList, strings.Join(lines, "\n")), nil
}

// taskState is how /tasks describes a task: pending, late (due and not
// yet fired) or failed with its reason; cancelled and done ones are not
// listed.
func taskState(lang string, t projections.TaskRow, now time.Time) (string, bool) {
	switch {
	case t.Status == task.TaskStatusFailed:
		return i18n.TaskText(lang, i18n.TaskStateFailed, t.LastError), true
	case t.Status != task.TaskStatusPending:
		return "", false
	case t.Due.Before(now):
		return i18n.TaskText(lang, i18n.TaskStateLate), true
	case t.LastError != "":
		return i18n.TaskText(lang, i18n.TaskStatePend) + " (" + i18n.TaskText(lang, i18n.TaskStateFailed, t.LastError) + ")", true
	}
	return i18n.TaskText(lang, i18n.TaskStatePend), true
}

func (c *Commands) cancel(ctx context.Context, call *cmdCall, prefix string) (string, error) {
	if prefix == "" {
		return i18n.More(call.lang, i18n.CancelUsage), nil
	}
	row, found, err := c.FindTask(ctx, call.sender, prefix)
	switch {
	case err != nil:
		return "", err
	case found == effects.TaskAmbiguous:
		return i18n.More(call.lang, i18n.CancelAmbiguous, prefix), nil
	case found == effects.TaskMissing:
		return i18n.Text(call.lang, i18n.TaskNotFound, prefix), nil
	}
	tk, err := c.CancelTask(ctx, call.md, row.ID, "command")
	if errors.Is(err, task.ErrTaskNotPending) {
		return i18n.Text(call.lang, i18n.TaskNotFound, prefix), nil
	}
	if err != nil {
		return "", err
	}
	return i18n.Text(call.lang, i18n.TaskCancelled, tk.Description), nil
}

func (c *Commands) language(ctx context.Context, call *cmdCall, arg string) (string, error) {
	supported := strings.Join(i18n.Languages(), ", ")
	if arg == "" {
		return i18n.More(call.lang, i18n.LanguageCurrent, call.lang, supported), nil
	}
	lang, ok := i18n.Normalize(arg)
	if !ok {
		return i18n.Text(call.lang, i18n.LanguageUnsupported, arg, supported), nil
	}
	if _, err := c.onSender(ctx, call, func(p sender.SenderProfile) []domain.Payload { return p.SwitchLanguage(lang) }); err != nil {
		return "", err
	}
	return i18n.Text(lang, i18n.LanguageSwitched, lang), nil
}

// dirNames lists the sub-directories of DataDir/sub.
func (c *Commands) dirNames(sub string) []string {
	entries, err := os.ReadDir(filepath.Join(c.DataDir, sub))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out
}

func (c *Commands) project(ctx context.Context, call *cmdCall, arg string) (string, error) {
	if arg == "" {
		return c.listProjects(ctx, call)
	}
	if strings.EqualFold(arg, "off") {
		if _, err := c.onSender(ctx, call, func(p sender.SenderProfile) []domain.Payload {
			if p.ActiveProject == "" {
				return nil
			}
			return []domain.Payload{sender.ProjectDeactivated{Project: p.ActiveProject}}
		}); err != nil {
			return "", err
		}
		return i18n.More(call.lang, i18n.ProjectOff), nil
	}
	names, err := c.projectNames(ctx)
	if err != nil {
		return "", err
	}
	if !slices.Contains(names, arg) {
		return i18n.More(call.lang, i18n.ProjectUnknown, arg), nil
	}
	if _, err := c.onSender(ctx, call, func(p sender.SenderProfile) []domain.Payload {
		if p.ActiveProject == arg {
			return nil
		}
		return []domain.Payload{sender.ProjectActivated{Project: arg}}
	}); err != nil {
		return "", err
	}
	return i18n.More(call.lang, i18n.ProjectOn, arg), nil
}

func (c *Commands) heartbeat(ctx context.Context, call *cmdCall) (string, error) {
	var hb heartbeat.Heartbeat
	scope := cmp.Or(call.profile.ActiveProject, heartbeat.GlobalHeartbeat)
	if _, err := eventstore.Fold(ctx, c.Store(), c.Registry(), heartbeat.HeartbeatStream(scope), &hb); err != nil {
		return "", err
	}
	lines := checklistLines(hb.Items)
	if lines == nil {
		return i18n.More(call.lang, i18n.NothingYet), nil
	}
	out := i18n.More(call.lang, i18n.HeartbeatReport, cmp.Or(hb.Interval, c.HeartbeatMinutes, DefaultHeartbeatMinutes), strings.Join(lines, "\n"))
	if c.HeartbeatNext != nil {
		if next, ok := c.HeartbeatNext(ctx, scope); ok {
			out += "\n" + i18n.More(call.lang, i18n.HeartbeatNext, c.when(next), cmp.Or(strings.Join(hb.Suppressed, ", "), "-"))
		}
	}
	return out, nil
}

// checklistLines shows a checklist: a "## Section — note" header as the
// section's name, each item as a bullet; nil when there is no item.
func checklistLines(items []string) []string {
	var lines []string
	n := 0
	for _, it := range items {
		if name := heartbeat.HeartbeatSectionName(it); name != "" {
			lines = append(lines, name+":")
			continue
		}
		lines = append(lines, "- "+it)
		n++
	}
	if n == 0 {
		return nil
	}
	return lines
}

func (c *Commands) learning(ctx context.Context, call *cmdCall) (string, error) {
	var l learning.Learning
	if _, err := eventstore.Fold(ctx, c.Store(), c.Registry(), learning.LearningStream(call.sender), &l); err != nil {
		return "", err
	}
	var lines []string
	for _, x := range l.Lessons {
		lines = append(lines, fmt.Sprintf("- [%s] %s", x.Domain, x.Rule))
	}
	for _, r := range l.Rewards {
		lines = append(lines, fmt.Sprintf("- (%+d) [%s] %s", r.Score, r.Domain, r.Lesson))
	}
	if len(lines) == 0 {
		return i18n.More(call.lang, i18n.NothingYet), nil
	}
	return i18n.More(call.lang, i18n.LearningList, strings.Join(lines, "\n")), nil
}

func (c *Commands) botName() string {
	if c.BotName == nil {
		return ""
	}
	return c.BotName()
}

// when shows a time in the configured zone.
func (c *Commands) when(t time.Time) string {
	return t.In(cmp.Or(c.Location, time.UTC)).Format("Mon 2 Jan 2006 15:04 MST")
}
