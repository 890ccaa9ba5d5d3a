package app

import (
	"github.com/ThreeDotsLabs/watermill/components/cqrs"

	"github.com/omega-gateway/omega/eventstore/messaging"
)

// CommandBuses opens the command buses on the app's store, with no
// handlers yet (app/commander adds them).
func (a *App) CommandBuses() (*messaging.Buses, error) {
	announcer, _ := a.backend.(messaging.Announcer)
	return messaging.New(messaging.Options{Backend: a.Store.Backend(), DB: a.backend.DB(), Log: a.Store,
		Registry: a.Registry, Logger: a.Logger, Announcer: announcer})
}

// CommandHandlers are the state-change handlers a command router runs
// without a runtime: senders, effects, spending limits and pairing.
func (a *App) CommandHandlers() ([]cqrs.CommandHandler, error) {
	pairings, err := a.commandAccess()
	if err != nil {
		return nil, err
	}
	hs := append(a.Senders.CommandHandlers(), a.Effects.CommandHandlers()...)
	hs = append(hs, a.budgetCommands()...)
	return append(hs, pairings.CommandHandlers()...), nil
}
