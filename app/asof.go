package app

import (
	"context"

	"github.com/omega-gateway/omega/handlers/asof"
	"github.com/omega-gateway/omega/projections"
	"github.com/omega-gateway/omega/projections/tasks"
)

// States answers what omega knew about a sender at any moment, folded
// from the log (omega state, the web UI's "as of"). The read models that
// name the streams to fold (turns, tasks) are awaited first.
func (a *App) States() (*asof.Reader, error) {
	current := func(ctx context.Context) error {
		return a.Engine.Reach(ctx, projections.Turns{}.Name(), tasks.ReadModel{}.Name())
	}
	return asof.New(asof.Reader{Store: a.Store, Registry: a.Registry, Profiles: a.Senders, Index: a.Queries,
		Current: current, Idle: a.Config.ConversationIdle})
}
