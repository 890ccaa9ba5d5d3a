package app

import (
	"time"

	"github.com/omega-gateway/omega/access"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/pipeline"
)

// newAccess builds sender pairing and identity links over the allowlists
// the process runs with; the owner is told of new pairing requests where
// heartbeat alerts go. channels is nil on the command line.
func (a *App) newAccess(allowed map[string][]string, channels pipeline.ChannelSet, loc *time.Location) (*access.Service, error) {
	ch, chat, err := a.Config.HeartbeatDestination()
	if err != nil {
		return nil, err
	}
	return access.New(access.Config{
		Store: a.Store, Registry: a.Registry, Allowed: allowed, Channels: channels, OwnerChannel: ch, OwnerChat: chat,
		Policy:   domain.PairingPolicy{TTL: a.Config.PairingCodeTTL, MaxPerHour: a.Config.PairingMaxCodes},
		Location: loc, Logger: a.Logger,
	})
}

// pairingGate is the driver's pairing gate: nil when pairing is off.
func (r *Runtime) pairingGate() pipeline.PairingGate {
	if !r.Config.PairingEnabled {
		return nil
	}
	return r.Access
}

// Access returns sender pairing and identity links for the command line:
// it reads and decides, and tells nobody (a running serve sends the
// notices).
func (a *App) Access() (*access.Service, error) {
	loc, err := a.Config.Location()
	if err != nil {
		return nil, err
	}
	return a.newAccess(nil, nil, loc)
}
