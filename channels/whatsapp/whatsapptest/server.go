package whatsapptest

import (
	"errors"
	"time"

	"go.mau.fi/whatsmeow/types/events"
)

// server is the WhatsApp server the double plays after SimulateServer.
type server struct {
	on       bool
	down     bool
	connects []time.Time
}

// SimulateServer makes the double connect as whatsmeow does: a Connect
// that succeeds is followed by a Connected event, and while ServerDown
// holds a Connect fails and sends fail with whatsmeow.ErrNotConnected.
func (c *Client) SimulateServer() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.server.on = true
}

// ServerDown drops the connection (the channel gets Disconnected) and
// refuses new ones until ServerUp.
func (c *Client) ServerDown() error {
	c.mu.Lock()
	c.server.down = true
	c.mu.Unlock()
	_, err := c.Deliver(&events.Disconnected{})
	return err
}

// ServerUp lets connections through again.
func (c *Client) ServerUp() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.server.down = false
}

// Connects returns when each Connect was called.
func (c *Client) Connects() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Time(nil), c.server.connects...)
}

func (c *Client) connect() error {
	c.mu.Lock()
	c.server.connects = append(c.server.connects, time.Now())
	srv, h := c.server, c.handler
	c.mu.Unlock()
	if !srv.on {
		return nil
	}
	if srv.down {
		return errors.New("whatsapptest: dial: connection refused")
	}
	if h != nil {
		// whatsmeow reports the login on its own goroutine.
		go h(&events.Connected{})
	}
	return nil
}

func (c *Client) offline() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.server.on && c.server.down
}
