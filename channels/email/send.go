package email

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/omega-gateway/omega/channels"
)

// SendText implements channels.Channel: one email, whatever its length.
func (c *Channel) SendText(ctx context.Context, chatID, text string) (channels.SendResult, error) {
	id, err := c.send(ctx, outgoing{to: chatID, markdown: text})
	if err != nil {
		return channels.SendResult{}, err
	}
	return channels.SendResult{PlatformIDs: []string{id}, Chunks: 1}, nil
}

// SendPhoto implements channels.Channel: the photo is attached to an
// email whose text is the caption.
func (c *Channel) SendPhoto(ctx context.Context, chatID string, photo channels.Attachment, caption string) error {
	_, err := c.SendPhotoResult(ctx, chatID, photo, caption)
	return err
}

// SendPhotoResult implements channels.PhotoReporter.
func (c *Channel) SendPhotoResult(ctx context.Context, chatID string, photo channels.Attachment, caption string) (channels.SendResult, error) {
	id, err := c.send(ctx, outgoing{to: chatID, markdown: caption, files: []channels.Attachment{photo}})
	if err != nil {
		return channels.SendResult{}, err
	}
	return channels.SendResult{PlatformIDs: []string{id}, Chunks: 1}, nil
}

func (c *Channel) send(ctx context.Context, o outgoing) (string, error) {
	th, ok := c.threads.get(o.to)
	if !ok {
		th, ok = c.lastFrom(ctx, o.to)
	}
	raw, id, err := c.compose(o, th, ok, c.now())
	if err != nil {
		return "", err
	}
	if err := c.submit(ctx, o.to, raw); err != nil {
		return "", fmt.Errorf("email: send to %s: %w", o.to, err)
	}
	return id, nil
}

// submit hands the message to the SMTP submission server.
func (c *Channel) submit(ctx context.Context, to string, raw []byte) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.CommandTimeout)
	defer cancel()
	cl, err := c.dialSMTP(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	if err := cl.Auth(sasl.NewPlainClient("", c.cfg.Username, c.cfg.Password)); err != nil {
		return classify("login", err)
	}
	if err := cl.SendMail(c.cfg.FromAddress(), []string{to}, bytes.NewReader(raw)); err != nil {
		return classify("submit", err)
	}
	return cl.Quit()
}

// dialSMTP connects in the configured TLS mode. The connection is closed
// when ctx ends, which bounds the whole exchange: go-smtp sets its own
// deadlines, minutes long, on every command.
func (c *Channel) dialSMTP(ctx context.Context) (*smtp.Client, error) {
	d := &net.Dialer{}
	conn, err := d.DialContext(ctx, "tcp", c.cfg.SMTPAddr)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", c.cfg.SMTPAddr, err)
	}
	context.AfterFunc(ctx, func() { _ = conn.Close() })
	tlsCfg := c.tlsConfig(c.cfg.SMTPAddr)
	var cl *smtp.Client
	switch c.cfg.SMTPTLS {
	case TLSImplicit:
		cl = smtp.NewClient(tls.Client(conn, tlsCfg))
	case TLSStart:
		if cl, err = smtp.NewClientStartTLS(conn, tlsCfg); err != nil {
			_ = conn.Close()
			return nil, fmt.Errorf("starttls with %s: %w", c.cfg.SMTPAddr, err)
		}
	default:
		cl = smtp.NewClient(conn)
	}
	cl.CommandTimeout, cl.SubmissionTimeout = c.cfg.CommandTimeout, c.cfg.CommandTimeout
	return cl, nil
}

// classify maps the server's refusal to the port's failure classes: an
// unknown or refused recipient is unreachable, any other permanent (5xx)
// answer a rejection; temporary (4xx) answers and I/O errors stay plain
// so the message may be sent again.
func classify(step string, err error) error {
	var se *smtp.SMTPError
	if !errors.As(err, &se) {
		return fmt.Errorf("%s: %w", step, err)
	}
	switch {
	case step == "submit" && (se.Code == 550 || se.Code == 551 || se.Code == 553):
		return fmt.Errorf("%s: %w: %d %s", step, channels.ErrBlocked, se.Code, se.Message)
	case se.Code >= 500:
		return fmt.Errorf("%s: %w: %d %s", step, channels.ErrRejected, se.Code, se.Message)
	}
	return fmt.Errorf("%s: %w", step, err)
}

// checkSMTP logs in to the submission server, for the doctor.
func (c *Channel) checkSMTP(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.CommandTimeout)
	defer cancel()
	cl, err := c.dialSMTP(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	if err := cl.Auth(sasl.NewPlainClient("", c.cfg.Username, c.cfg.Password)); err != nil {
		return fmt.Errorf("login as %s: %w", c.cfg.Username, err)
	}
	return cl.Quit()
}

// checkIMAP logs in and selects the mailbox, for the doctor; it returns
// how many messages the mailbox holds.
func (c *Channel) checkIMAP(ctx context.Context) (int, error) {
	s, err := c.dialIMAP(ctx)
	if err != nil {
		return 0, err
	}
	defer s.close()
	return int(s.cl.Mailbox().NumMessages), nil
}
