package system

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
)

// DecisionInputs is the configuration a process decides turns with: who
// may talk on each channel, whether unknown senders may pair (and the
// code policy), where owner notices go, the time zone, and how a turn is
// routed (classification, models, history, conversation idle). A process
// records it at start, once per distinct content, on a stream named by
// its hash; each turn's access decision names that hash (AccessGranted
// and AccessDenied Inputs), so a re-run decides with the configuration in
// force then, never with the shell's.
type DecisionInputs struct {
	// Allowed maps a channel to its allowlist (owner first); a channel
	// listed with no ids is one where unknown senders may pair.
	Allowed          map[string][]string `json:"allowed"`
	Pairing          bool                `json:"pairing"`
	PairingCodeTTL   time.Duration       `json:"pairing_code_ttl"`
	PairingMaxCodes  int                 `json:"pairing_max_codes"`
	OwnerChannel     string              `json:"owner_channel,omitempty"`
	OwnerChat        string              `json:"owner_chat,omitempty"`
	Timezone         string              `json:"timezone"`
	Classify         bool                `json:"classify"`
	ModelFast        string              `json:"model_fast,omitempty"`
	ModelComplex     string              `json:"model_complex,omitempty"`
	HistoryLimit     int                 `json:"history_limit"`
	ConversationIdle time.Duration       `json:"conversation_idle"`
}

func (DecisionInputs) EventType() string { return "DecisionInputsRecorded" }

// inputsPrefix starts the name of every decision inputs stream.
const inputsPrefix = "inputs-"

// DecisionInputsStream names the stream that holds the inputs with this
// hash.
func DecisionInputsStream(hash string) string { return inputsPrefix + hash }

// IsDecisionInputsStream reports whether a stream holds decision inputs.
func IsDecisionInputsStream(stream string) bool { return strings.HasPrefix(stream, inputsPrefix) }

// Normalized returns the inputs with every allowlist a non-nil copy, so
// that equal configurations hash alike.
func (in DecisionInputs) Normalized() DecisionInputs {
	allowed := make(map[string][]string, len(in.Allowed))
	for ch, ids := range in.Allowed {
		allowed[ch] = append([]string{}, ids...)
	}
	in.Allowed = allowed
	return in
}

// Hash is the inputs' content address (the first 16 hex digits of the
// SHA-256 of their JSON; maps marshal with sorted keys).
func (in DecisionInputs) Hash() string {
	b, _ := json.Marshal(in.Normalized()) // plain data: cannot fail
	return turn.TextHash(string(b))[:16]
}

// RegisterInputsEvents registers the decision inputs event.
func RegisterInputsEvents(r *domain.Registry) { r.Register(DecisionInputs{}, 1) }
