package system

import "github.com/omega-gateway/omega/domain"

// WhatsAppPairingStream records every attempt to link a WhatsApp account
// through another channel (the /whatsapp command, the WHATSAPP_QR marker).
const WhatsAppPairingStream = "whatsapp-pairing"

// WhatsApp pairing events. Session ties the events of one attempt together
// (it is also the metadata's correlation id). The QR payloads themselves are
// never recorded: while valid, a code links a device to the account.
type (
	// WhatsAppPairingStarted: a pairing session began; its codes go to
	// Channel/ChatID.
	WhatsAppPairingStarted struct {
		Session string `json:"session"`
		Channel string `json:"channel"`
		ChatID  string `json:"chat_id"`
	}
	// WhatsAppQRSent: the Index-th code (from 1) was sent as an image, or
	// could not be (Error).
	WhatsAppQRSent struct {
		Session    string `json:"session"`
		Index      int    `json:"index"`
		ValidForMs int64  `json:"valid_for_ms,omitempty"`
		Error      string `json:"error,omitempty"`
	}
	// WhatsAppPaired: the phone linked the device.
	WhatsAppPaired struct {
		Session string `json:"session"`
	}
	// WhatsAppPairingFailed: the session ended without a link.
	WhatsAppPairingFailed struct {
		Session string `json:"session"`
		Reason  string `json:"reason"` // timeout, error, canceled, undeliverable
		Error   string `json:"error,omitempty"`
	}
)

// Reasons of WhatsAppPairingFailed.
const (
	PairingTimeout       = "timeout"
	PairingError         = "error"
	PairingCanceled      = "canceled"
	PairingUndeliverable = "undeliverable"
)

func (WhatsAppPairingStarted) EventType() string { return "WhatsAppPairingStarted" }
func (WhatsAppQRSent) EventType() string         { return "WhatsAppQRSent" }
func (WhatsAppPaired) EventType() string         { return "WhatsAppPaired" }
func (WhatsAppPairingFailed) EventType() string  { return "WhatsAppPairingFailed" }

// RegisterWhatsAppEvents adds the WhatsApp pairing events to a registry.
func RegisterWhatsAppEvents(r *domain.Registry) {
	for _, p := range []domain.Payload{WhatsAppPairingStarted{}, WhatsAppQRSent{}, WhatsAppPaired{}, WhatsAppPairingFailed{}} {
		r.Register(p, 1)
	}
}
