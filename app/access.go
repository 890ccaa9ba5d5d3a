package app

import (
	"time"

	accessdom "github.com/omega-gateway/omega/domain/access"
	"github.com/omega-gateway/omega/domain/system"
	"github.com/omega-gateway/omega/handlers/access"
	"github.com/omega-gateway/omega/handlers/pipeline"
)

// newAccess builds sender pairing and identity links over the allowlists
// the process runs with; the owner is told of new pairing requests where
// heartbeat alerts go. channels is nil on the command line.
func (a *App) newAccess(in system.DecisionInputs, channels pipeline.ChannelSet, loc *time.Location, replay *Replay) (*access.Service, error) {
	cfg := access.Config{
		Store: a.Store, Registry: a.Registry, Allowed: in.Allowed, Channels: channels, OwnerChannel: in.OwnerChannel, OwnerChat: in.OwnerChat,
		Policy:   accessdom.PairingPolicy{TTL: in.PairingCodeTTL, MaxPerHour: in.PairingMaxCodes},
		Location: loc, Logger: a.Logger,
	}
	if replay != nil {
		cfg.Now = replay.Now
	}
	return access.New(cfg)
}

// pairingGate is the driver's pairing gate: nil when pairing is off.
func (r *Runtime) pairingGate() pipeline.PairingGate {
	if !r.inputs.Pairing {
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
	in, err := a.configuredInputs(nil)
	if err != nil {
		return nil, err
	}
	return a.newAccess(in, nil, loc, nil)
}

// commandAccess is the access service of a command router without
// channels: it decides on the pairing stream and tells nobody.
func (a *App) commandAccess() (*access.Service, error) {
	in, err := a.configuredInputs(nil)
	if err != nil {
		return nil, err
	}
	return a.newAccess(in, nil, nil, nil)
}
