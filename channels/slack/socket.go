package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/gorilla/websocket"
	"github.com/slack-go/slack/socketmode"

	"github.com/omega-gateway/omega/channels"
)

var (
	// errStalled: the socket went silent past keep-alive plus grace.
	errStalled = errors.New("slack: the Socket Mode connection went silent (no pong, no event)")
	// errRefresh: Slack sent a disconnect asking for a new connection.
	errRefresh = errors.New("slack: Slack asked for a new connection")
)

// maxEnvelope bounds one Socket Mode message (Slack's are a few KiB).
const maxEnvelope = 4 << 20

// session runs one Socket Mode connection until it fails or ctx ends:
// it hands every events_api envelope to the pipeline and acknowledges it
// once the pipeline recorded it.
func (c *Channel) session(ctx context.Context, deliver channels.Deliver) error {
	window := c.cfg.KeepAlive + c.cfg.StallGrace
	conn, err := c.open(ctx, window)
	if err != nil {
		return err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	conn.SetReadLimit(maxEnvelope)
	// A pong (or Slack's ping) proves the connection alive: it moves the
	// read deadline on although ReadMessage returns only data.
	alive := func() error { return conn.SetReadDeadline(time.Now().Add(window)) }
	conn.SetPongHandler(func(string) error { return alive() })
	conn.SetPingHandler(func(data string) error {
		_ = alive()
		err := conn.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(c.cfg.KeepAlive))
		if errors.Is(err, websocket.ErrCloseSent) {
			return nil
		}
		return err
	})
	pingCtx, cancelPing := context.WithCancel(ctx)
	defer cancelPing()
	go c.ping(pingCtx, conn)
	for {
		_ = conn.SetReadDeadline(time.Now().Add(window))
		_, raw, err := conn.ReadMessage()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return errStalled
			}
			return fmt.Errorf("slack: the Socket Mode connection closed: %w", err)
		}
		if err := c.envelope(ctx, conn, raw, deliver); err != nil {
			return err
		}
	}
}

// open asks Slack for a Socket Mode URL with the app-level token and
// dials it, both bounded by window.
func (c *Channel) open(ctx context.Context, window time.Duration) (*websocket.Conn, error) {
	if err := c.identify(ctx); err != nil {
		return nil, err
	}
	octx, cancel := context.WithTimeout(ctx, window)
	defer cancel()
	_, url, err := c.api.StartSocketModeContext(octx)
	if err != nil {
		return nil, fmt.Errorf("apps.connections.open: %s: %w", describe(err), err)
	}
	dialer := websocket.Dialer{HandshakeTimeout: window}
	conn, resp, err := dialer.DialContext(octx, url, nil)
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("dial Socket Mode: %w", err)
	}
	return conn, nil
}

// identify learns the bot's own member id once (auth.test), to tell
// mentions of it and its own messages.
func (c *Channel) identify(ctx context.Context) error {
	if c.bot() != "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.KeepAlive+c.cfg.StallGrace)
	defer cancel()
	who, err := c.api.AuthTestContext(ctx)
	if err != nil {
		return fmt.Errorf("auth.test: %s: %w", describe(err), err)
	}
	c.mu.Lock()
	c.botID = who.UserID
	c.mu.Unlock()
	return nil
}

func (c *Channel) bot() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.botID
}

// ping keeps the connection proven alive: each pong (or any frame)
// moves the read deadline on.
func (c *Channel) ping(ctx context.Context, conn *websocket.Conn) {
	t := time.NewTicker(c.cfg.KeepAlive)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(c.cfg.KeepAlive)); err != nil {
				return
			}
		}
	}
}

// envelope handles one Socket Mode message. Only a broken connection or
// Slack's disconnect ends the session; a message omega cannot record is
// left unacknowledged, so Slack offers it again.
func (c *Channel) envelope(ctx context.Context, conn *websocket.Conn, raw []byte, deliver channels.Deliver) error {
	var req socketmode.Request
	if err := json.Unmarshal(raw, &req); err != nil {
		c.log.Warn("slack: unreadable Socket Mode message skipped", "err", err)
		return nil
	}
	switch req.Type {
	case "hello":
		c.health.OK()
		c.log.Info("slack receiving", "bot", c.bot())
		return nil
	case "disconnect":
		if req.Reason == "link_disabled" {
			return errors.New("slack: Slack disabled Socket Mode for the app (link_disabled): turn it on in the app's settings")
		}
		return fmt.Errorf("%w (%s)", errRefresh, req.Reason)
	case "events_api":
		if err := c.event(ctx, req, deliver); err != nil {
			c.log.Error("slack: event not recorded, left unacknowledged for Slack to offer again",
				"envelope", req.EnvelopeID, "retry_attempt", req.RetryAttempt, "err", err)
			return nil
		}
	}
	if req.EnvelopeID == "" {
		return nil
	}
	_ = conn.SetWriteDeadline(time.Now().Add(c.cfg.KeepAlive))
	if err := conn.WriteJSON(socketmode.Response{EnvelopeID: req.EnvelopeID}); err != nil {
		return fmt.Errorf("acknowledge envelope: %w", err)
	}
	return nil
}
