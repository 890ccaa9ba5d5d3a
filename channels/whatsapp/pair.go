package whatsapp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/mdp/qrterminal/v3"
	"go.mau.fi/whatsmeow"

	"github.com/omega-gateway/omega/channels"
)

// PairingSource starts a pairing session. *Channel is the real one.
type PairingSource interface {
	// QRCodes starts pairing; the channel yields rotating codes and ends
	// with a Done event, then closes.
	QRCodes(ctx context.Context) (<-chan channels.QREvent, error)
	// PairPhone asks for an 8-character linking code for phone, to be
	// typed on the phone instead of scanning a QR code. Valid only after
	// the first QR event of a running session.
	PairPhone(ctx context.Context, phone string) (string, error)
}

// QRCodes implements PairingSource: it connects the unpaired device and
// relays whatsmeow's QR codes.
func (c *Channel) QRCodes(ctx context.Context) (<-chan channels.QREvent, error) {
	if c.Paired() {
		return nil, errors.New("whatsapp: a device is already paired")
	}
	items, err := c.client.GetQRChannel(ctx)
	if err != nil {
		return nil, fmt.Errorf("whatsapp: start pairing: %w", err)
	}
	if err := c.client.Connect(); err != nil && !errors.Is(err, whatsmeow.ErrAlreadyConnected) {
		return nil, fmt.Errorf("whatsapp: connect for pairing: %w", err)
	}
	out := make(chan channels.QREvent, 1)
	go func() {
		defer close(out)
		for item := range items {
			ev := qrEvent(item)
			if ev.Done && ev.Err != nil {
				c.client.Disconnect()
			}
			select {
			case out <- ev:
			case <-ctx.Done():
				return
			}
			if ev.Done {
				return
			}
		}
	}()
	return out, nil
}

func qrEvent(item whatsmeow.QRChannelItem) channels.QREvent {
	switch item.Event {
	case whatsmeow.QRChannelEventCode:
		return channels.QREvent{Code: item.Code, Timeout: item.Timeout}
	case whatsmeow.QRChannelSuccess.Event:
		return channels.QREvent{Done: true}
	case whatsmeow.QRChannelTimeout.Event:
		return channels.QREvent{Done: true, Err: channels.ErrPairTimeout}
	case whatsmeow.QRChannelEventError:
		return channels.QREvent{Done: true, Err: fmt.Errorf("whatsapp pairing failed: %w", item.Error)}
	default:
		return channels.QREvent{Done: true, Err: fmt.Errorf("whatsapp pairing failed: %s", item.Event)}
	}
}

// PairPhone implements PairingSource.
func (c *Channel) PairPhone(ctx context.Context, phone string) (string, error) {
	code, err := c.client.PairPhone(ctx, NormalizePhone(phone))
	if err != nil {
		return "", fmt.Errorf("whatsapp: request pairing code: %w", err)
	}
	return code, nil
}

// Pair links a WhatsApp account interactively. With an empty phone it
// prints each QR code to out as it rotates; with a phone number it prints
// a linking code to type on that phone. It returns when the phone linked,
// the codes ran out, or ctx ended.
func Pair(ctx context.Context, src PairingSource, out io.Writer, phone string) error {
	events, err := src.QRCodes(ctx)
	if err != nil {
		return err
	}
	phone = NormalizePhone(phone)
	codeShown := false
	for {
		var ev channels.QREvent
		var ok bool
		select {
		case <-ctx.Done():
			return fmt.Errorf("whatsapp pairing: %w", ctx.Err())
		case ev, ok = <-events:
		}
		switch {
		case !ok:
			return errors.New("whatsapp pairing ended without a result")
		case ev.Done && ev.Err != nil:
			return ev.Err
		case ev.Done:
			fmt.Fprintln(out, "WhatsApp linked. omega will now receive your messages.")
			return nil
		case phone == "":
			printQR(out, ev)
		case !codeShown:
			code, err := src.PairPhone(ctx, phone)
			if err != nil {
				return err
			}
			printLinkCode(out, code)
			codeShown = true
		}
	}
}

func printQR(out io.Writer, ev channels.QREvent) {
	fmt.Fprintln(out, "Scan this code with WhatsApp: Settings → Linked devices → Link a device.")
	qrterminal.GenerateHalfBlock(ev.Code, qrterminal.L, out)
	if ev.Timeout > 0 {
		fmt.Fprintf(out, "A new code follows in %s.\n\n", ev.Timeout.Round(time.Second))
	}
}

func printLinkCode(out io.Writer, code string) {
	if len(code) == 8 {
		code = code[:4] + "-" + code[4:]
	}
	fmt.Fprintf(out, "Your linking code: %s\n", code)
	fmt.Fprintln(out, "On your phone: WhatsApp → Settings → Linked devices → Link a device →")
	fmt.Fprintln(out, "\"Link with phone number instead\", then type the code above.")
}
