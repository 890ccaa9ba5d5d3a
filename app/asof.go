package app

import "github.com/omega-gateway/omega/handlers/asof"

// States answers what omega knew about a sender at any moment, folded
// from the log (omega state, the web UI's "as of").
func (a *App) States() (*asof.Reader, error) {
	return asof.New(asof.Reader{Store: a.Store, Registry: a.Registry, Profiles: a.Senders, Index: a.Queries,
		Idle: a.Config.ConversationIdle})
}
