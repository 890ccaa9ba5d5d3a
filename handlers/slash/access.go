package slash

import (
	"context"

	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/turn"
)

// AccessCommands answers the owner's /pair and /link (the access package);
// it checks that the sender is the owner.
type AccessCommands interface {
	Pair(ctx context.Context, tn *turn.Turn, lang, arg string) (string, error)
	Link(ctx context.Context, tn *turn.Turn, lang, arg string) (string, error)
}

// accessAnswer answers /pair or /link through the Access hook; without
// one the command is unknown here.
func (c *Commands) accessAnswer(ctx context.Context, call *cmdCall, arg string, link bool) (string, error) {
	switch {
	case c.Access == nil:
		return i18n.Text(call.lang, i18n.UnknownCommand, "/pair") + "\n\n" + i18n.Text(call.lang, i18n.Help), nil
	case link:
		return c.Access.Link(ctx, call.turn, call.lang, arg)
	}
	return c.Access.Pair(ctx, call.turn, call.lang, arg)
}
