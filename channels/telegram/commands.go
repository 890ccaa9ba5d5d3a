package telegram

import (
	"context"
	"time"

	"github.com/mymmrac/telego"
)

// Menu is the command menu for users whose Telegram language is
// LanguageCode ("" for everyone else).
type Menu struct {
	LanguageCode string
	Commands     []Command
}

// Command is one menu entry: the command without its slash, and what it
// does.
type Command struct {
	Name, Description string
}

// WithCommands registers the command menus (setMyCommands) once the bot
// is identified, so that typing "/" offers them in the user's language.
func WithCommands(menus []Menu) Option {
	return func(c *Channel) { c.menus = menus }
}

const menuTimeout = 10 * time.Second

// registerCommands sets each menu. A failure is logged and left: the
// commands still work when typed, only the menu is missing.
func (c *Channel) registerCommands(ctx context.Context) {
	for _, m := range c.menus {
		cmds := make([]telego.BotCommand, len(m.Commands))
		for i, cmd := range m.Commands {
			cmds[i] = telego.BotCommand{Command: cmd.Name, Description: cmd.Description}
		}
		callCtx, cancel := context.WithTimeout(ctx, menuTimeout)
		err := c.bot.SetMyCommands(callCtx, &telego.SetMyCommandsParams{Commands: cmds, LanguageCode: m.LanguageCode})
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			c.log.Warn("telegram: setting the command menu failed; commands still work when typed",
				"language_code", m.LanguageCode, "err", c.redact(err))
			continue
		}
		c.log.Debug("telegram command menu set", "language_code", m.LanguageCode, "commands", len(cmds))
	}
}
