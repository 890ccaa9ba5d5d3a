package rerun

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"slices"

	"github.com/omega-gateway/omega/app/config"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/learning"
	"github.com/omega-gateway/omega/domain/system"
	"github.com/omega-gateway/omega/domain/turn"
)

// recordedInputs are the decision inputs the turn named (its access
// decision records their hash). A turn recorded before inputs were
// recorded gets legacyInputs, and a note says so.
func recordedInputs(ctx context.Context, src Source, reg *domain.Registry, cfg config.Config, decoded []domain.Payload, msg turn.MessageReceived) (system.DecisionInputs, string, error) {
	hash := inputsHash(decoded)
	if hash == "" {
		return legacyInputs(cfg, decoded, msg), "the turn names no recorded decision inputs: allowlists follow its recorded decision, the rest this shell's configuration", nil
	}
	evs, err := src.Load(ctx, system.DecisionInputsStream(hash), 1)
	if err != nil {
		return system.DecisionInputs{}, "", fmt.Errorf("load the decision inputs %s: %w", hash, err)
	}
	if len(evs) == 0 {
		return system.DecisionInputs{}, "", fmt.Errorf("the turn names decision inputs %s, which are not in the log", hash)
	}
	p, err := reg.Decode(evs[0])
	if err != nil {
		return system.DecisionInputs{}, "", fmt.Errorf("decode the decision inputs %s: %w", hash, err)
	}
	return p.(system.DecisionInputs), "", nil
}

func inputsHash(decoded []domain.Payload) string {
	for _, p := range decoded {
		switch ev := p.(type) {
		case turn.AccessGranted:
			return ev.Inputs
		case turn.AccessDenied:
			return ev.Inputs
		}
	}
	return ""
}

// withInputs is the scratch run's configuration: the recorded routing
// inputs replace the shell's (recorded false: the turn recorded none).
func withInputs(cfg config.Config, in system.DecisionInputs, recorded bool) config.Config {
	if recorded {
		cfg.Classify, cfg.HistoryLimit, cfg.ConversationIdle = in.Classify, in.HistoryLimit, in.ConversationIdle
		cfg.Provider.ModelFast = cmp.Or(in.ModelFast, cfg.Provider.ModelFast)
		cfg.Provider.ModelComplex = cmp.Or(in.ModelComplex, cfg.Provider.ModelComplex)
	}
	return cfg
}

// legacyInputs are this shell's configured inputs with the turn's channel
// allowlist made to agree with the decision the turn recorded: what
// decided it was not recorded, the decision was.
func legacyInputs(cfg config.Config, decoded []domain.Payload, msg turn.MessageReceived) system.DecisionInputs {
	in := system.DecisionInputs{Allowed: map[string][]string{}, Pairing: cfg.PairingEnabled, PairingCodeTTL: cfg.PairingCodeTTL,
		PairingMaxCodes: cfg.PairingMaxCodes, Timezone: cmp.Or(cfg.Timezone, "Local"),
		Classify: cfg.Classify, ModelFast: cfg.Provider.ModelFast, ModelComplex: cfg.Provider.ModelComplex,
		HistoryLimit: cfg.HistoryLimit, ConversationIdle: cfg.ConversationIdle}
	for _, e := range cfg.Enabled() {
		in.Allowed[e.Name] = e.Settings.Allowed()
	}
	in.OwnerChannel, in.OwnerChat, _ = cfg.HeartbeatDestination() // invalid: no owner, as the turn would report
	for _, p := range decoded {
		switch ev := p.(type) {
		case turn.AccessGranted:
			agree(in.Allowed, ev.Reason, msg)
		case turn.AccessDenied:
			agree(in.Allowed, ev.Reason, msg)
		}
	}
	return in.Normalized()
}

// reasons map the recorded reason of an access decision to the allowlist
// that gives it.
var reasons = []struct {
	re     *regexp.Regexp
	listed bool // the channel has an allowlist
	member bool // the sender is on it
}{
	{regexp.MustCompile(`^allowlisted on `), true, true},
	{regexp.MustCompile(`^paired on `), true, false},
	{regexp.MustCompile(`^unknown sender `), true, false},
	{regexp.MustCompile(`is not on the \S+ allowlist$`), true, false},
	{regexp.MustCompile(`^no allowlist configured for channel `), false, false},
}

func agree(allowed map[string][]string, reason string, msg turn.MessageReceived) {
	for _, r := range reasons {
		if !r.re.MatchString(reason) {
			continue
		}
		ids := slices.DeleteFunc(slices.Clone(allowed[msg.Channel]), func(id string) bool { return id == msg.SenderID })
		switch {
		case !r.listed:
			delete(allowed, msg.Channel)
		case r.member:
			allowed[msg.Channel] = append([]string{msg.SenderID}, ids...)
		default:
			allowed[msg.Channel] = ids
		}
		return
	}
}

// recordedOwner answers owner alerts with the outcomes the turn recorded
// (OwnerAlerted on the bug report and limitation streams), in order; an
// alert more than were recorded is itself a difference.
type recordedOwner struct {
	alerts []system.OwnerAlerted
}

func (o *recordedOwner) Alert(context.Context, string) (string, string, error) {
	if len(o.alerts) == 0 {
		return "", "", fmt.Errorf("re-run: no recorded owner alert")
	}
	a := o.alerts[0]
	o.alerts = o.alerts[1:]
	if a.Error != "" {
		return a.Channel, a.Chat, &replayedError{msg: a.Error}
	}
	return a.Channel, a.Chat, nil
}

// ownerAlerts are the owner alerts the turn caused, in log order.
func ownerAlerts(ctx context.Context, src Source, reg *domain.Registry, turnID string) (*recordedOwner, error) {
	var evs []domain.Event
	for _, stream := range []string{learning.BugReportsStream, learning.LimitationsStream} {
		got, err := src.Load(ctx, stream, 1)
		if err != nil {
			return nil, fmt.Errorf("load %s: %w", stream, err)
		}
		for _, e := range got {
			if e.Type == (system.OwnerAlerted{}).EventType() && e.Metadata.CorrelationID == turnID {
				evs = append(evs, e)
			}
		}
	}
	slices.SortStableFunc(evs, func(a, b domain.Event) int { return a.RecordedAt.Compare(b.RecordedAt) })
	o := &recordedOwner{}
	for _, e := range evs {
		p, err := reg.Decode(e)
		if err != nil {
			return nil, fmt.Errorf("decode an owner alert: %w", err)
		}
		o.alerts = append(o.alerts, p.(system.OwnerAlerted))
	}
	return o, nil
}
