package signal

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/omega-gateway/omega/channels"
)

var (
	// errStalled: the stream sent nothing, not even a keep-alive, past
	// SIGNAL_KEEPALIVE plus SIGNAL_STALL_GRACE.
	errStalled = errors.New("signal: the daemon's event stream went silent (no event, no keep-alive)")
	// errDeliver wraps a pipeline failure.
	errDeliver = errors.New("signal: the pipeline did not record the message")
)

// catchupID is a Last-Event-ID the daemon does not know: it answers
// with every event it keeps, what arrived while omega was not running.
const catchupID = "omega-catchup"

// sse is one server-sent event.
type sse struct{ id, name, data string }

// stream reads the daemon's event stream until it fails or ctx ends.
func (c *Channel) stream(ctx context.Context, deliver channels.Deliver) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.cfg.base()+"/api/v1/events", nil)
	if err != nil {
		return fmt.Errorf("signal: events: %w", err)
	}
	req.Header.Set("Accept", "text/event-stream")
	if id := c.resumeFrom(); id != "" {
		req.Header.Set("Last-Event-ID", id)
	}
	window := c.cfg.KeepAlive + c.cfg.StallGrace
	cl := &http.Client{Transport: &http.Transport{ResponseHeaderTimeout: window, DisableKeepAlives: true, Proxy: http.ProxyFromEnvironment}}
	resp, err := cl.Do(req)
	if err != nil {
		return connectError(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("signal: events: %w", statusError{resp.StatusCode})
	}
	c.health.OK()
	c.log.Info("signal receiving", "daemon", c.cfg.base(), "account", c.cfg.Account)
	return c.read(ctx, lines(ctx, resp.Body), window, deliver)
}

// lines reads body line by line until it ends or ctx does.
func lines(ctx context.Context, body io.Reader) <-chan string {
	out := make(chan string)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(body)
		sc.Buffer(make([]byte, 64<<10), 8<<20)
		for sc.Scan() {
			select {
			case out <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// connectError is a failed request for the stream: a stall when no
// answer came within keep-alive plus grace.
func connectError(err error) error {
	var ne interface{ Timeout() bool }
	if errors.As(err, &ne) && ne.Timeout() {
		return errStalled
	}
	return fmt.Errorf("signal: events: %w", err)
}

// read dispatches the stream's events, each line proving it alive.
func (c *Channel) read(ctx context.Context, lines <-chan string, window time.Duration, deliver channels.Deliver) error {
	timer := time.NewTimer(window)
	defer timer.Stop()
	var ev sse
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
			return errStalled
		case line, ok := <-lines:
			if !ok {
				return errors.New("signal: the daemon closed the event stream")
			}
			timer.Reset(window)
			if line != "" {
				ev = ev.add(line)
				continue
			}
			if ev.data != "" {
				if err := c.dispatch(ctx, ev, deliver); err != nil {
					return err
				}
			}
			ev = sse{}
		}
	}
}

// add reads one line of an event (a comment is a keep-alive).
func (e sse) add(line string) sse {
	field, value, _ := strings.Cut(line, ":")
	value = strings.TrimPrefix(value, " ")
	switch field {
	case "id":
		e.id = value
	case "event":
		e.name = value
	case "data":
		if e.data != "" {
			e.data += "\n"
		}
		e.data += value
	}
	return e
}

// dispatch hands a receive event to the pipeline and moves the resume
// point past it once recorded (or found not to be a message).
func (c *Channel) dispatch(ctx context.Context, ev sse, deliver channels.Deliver) error {
	if ev.name != "" && ev.name != "receive" {
		c.moveTo(ev.id)
		return nil
	}
	var r received
	if err := json.Unmarshal([]byte(ev.data), &r); err != nil {
		c.log.Warn("signal: unreadable event skipped", "id", ev.id, "err", err)
		c.moveTo(ev.id)
		return nil
	}
	in, why := c.incoming(r.Envelope)
	if why != "" {
		c.log.Debug("signal: event not for the pipeline", "id", ev.id, "why", why)
		c.moveTo(ev.id)
		return nil
	}
	atts, err := c.attachments(ctx, r.Envelope)
	if err != nil {
		return fmt.Errorf("%w: %w", errDeliver, err)
	}
	in.Attachments = atts
	if err := deliver(ctx, in); err != nil {
		return fmt.Errorf("%w: %s: %w", errDeliver, in.PlatformID, err)
	}
	c.moveTo(ev.id)
	return nil
}

// resumeFrom is the Last-Event-ID to send: the last event handled, or
// on the first connection of a run, catchupID when catching up.
func (c *Channel) resumeFrom() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lastID == "" && c.cfg.Catchup > 0 {
		return catchupID
	}
	return c.lastID
}

func (c *Channel) moveTo(id string) {
	if id == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lastID = id
}
