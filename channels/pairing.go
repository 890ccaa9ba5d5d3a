package channels

import (
	"errors"
	"fmt"
	"time"

	"github.com/skip2/go-qrcode"
)

// QREvent is one step of a device-pairing session (WhatsApp): a new QR
// code to show, or the final outcome (Done, successful when Err is nil).
// It lives in the port so that the pairing handler, which sends the codes
// through another channel, does not depend on a concrete channel.
type QREvent struct {
	Code    string        // QR payload to render; empty on the final event
	Timeout time.Duration // how long Code stays valid before the next one
	Done    bool
	Err     error
}

// ErrPairTimeout: the QR codes ran out before the phone linked.
var ErrPairTimeout = errors.New("whatsapp pairing timed out")

// QRPNG renders a pairing code as a 256 px PNG, for sending the QR code
// as an image through another channel (e.g. Telegram).
func QRPNG(code string) ([]byte, error) {
	png, err := qrcode.Encode(code, qrcode.Medium, 256)
	if err != nil {
		return nil, fmt.Errorf("encode qr png: %w", err)
	}
	return png, nil
}
