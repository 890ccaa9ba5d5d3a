// Package slash answers bot commands (/help, /tasks, /forget...) from the
// read models and aggregates, without a provider call; commands that
// change something record events.
package slash

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/commands"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/handlers/effects"
	"github.com/omega-gateway/omega/handlers/pipeline"
	"github.com/omega-gateway/omega/handlers/skills"
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
	// Recall answers /search (nil: /search only says how to use it).
	Recall Recaller
	// Builds starts and steers builds; nil: /build is not offered.
	Builds Builds
	// Budget answers /usage; nil: no spending is reported.
	Budget BudgetStatus
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
	cmd, isSlash := commands.Parse(tn.Received.Text, c.botName())
	m := tn.Received
	call := &cmdCall{turn: tn, profile: profile, lang: commandLanguage(tn, profile), sender: sender.SenderKey(m.Channel, m.SenderID),
		md: domain.Metadata{CorrelationID: tn.ID, CausationID: tn.ID + "/command", Channel: m.Channel, Sender: m.SenderID, Project: profile.ActiveProject}}
	if !isSlash { // a plain message AnswersChat took
		cmd = commands.Command{Name: commands.Build, Word: commands.Build}
		reply, err := c.buildChat(ctx, call)
		return pipeline.CommandAnswer{Command: cmd.Name, Reply: reply, Events: call.events}, err
	}
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
	commands.Usage: func(c *Commands, ctx context.Context, call *cmdCall, _ string) (string, error) {
		return c.usage(ctx, call)
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
	commands.Search:  (*Commands).search,
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
	commands.Build: (*Commands).build,
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
