package discord

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// discordHost is where discordgo's endpoints point.
const discordHost = "discord.com"

// rewrite sends discordgo's REST calls to the configured API base.
// discordgo names https://discord.com/ in package-level endpoint
// variables; assigning them would move every session in the process (and
// race with it), so the session's own HTTP client rewrites the address
// instead. The gateway needs no rewrite: its address is what GET /gateway
// answers.
type rewrite struct {
	base *url.URL
	next http.RoundTripper
}

func (r rewrite) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host != discordHost || (r.base.Host == discordHost && r.base.Scheme == "https" && strings.Trim(r.base.Path, "/") == "") {
		return r.next.RoundTrip(req)
	}
	out := req.Clone(req.Context())
	out.URL.Scheme, out.URL.Host = r.base.Scheme, r.base.Host
	out.URL.Path = strings.TrimRight(r.base.Path, "/") + req.URL.Path
	out.Host = ""
	return r.next.RoundTrip(out)
}

// newHTTPClient is the REST client: requests to discord.com go to base.
func newHTTPClient(base *url.URL, timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: rewrite{base: base, next: http.DefaultTransport}}
}

// stallWatch detects a gateway connection that fell silent. Discord
// answers every heartbeat with an ACK, and discordgo heartbeats every
// interval, so a healthy connection never goes longer than the interval
// without a frame; each read is given the interval plus the grace, and
// one that times out ends the connection, which the channel then
// resumes. discordgo's own check waits five intervals (several minutes)
// and keeps the interval private, so the interval is read from the HELLO
// frame as it passes.
type stallWatch struct {
	grace   time.Duration
	stalled atomic.Bool // the last connection ended by a read timeout
	// onStall is told at once, from the reading goroutine; the
	// connection's end (discordgo closes it, which takes a second) comes
	// after.
	onStall func()

	mu    sync.Mutex
	conns map[*watchedConn]bool
}

// closeAll closes the open connections, so a Stop does not wait for an
// Open blocked on a silent gateway.
func (w *stallWatch) closeAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for c := range w.conns {
		_ = c.Conn.Close()
	}
}

func (w *stallWatch) track(c *watchedConn, open bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.conns == nil {
		w.conns = map[*watchedConn]bool{}
	}
	if open {
		w.conns[c] = true
	} else {
		delete(w.conns, c)
	}
}

// dialer is the gateway's WebSocket dialer, with each connection watched.
func (w *stallWatch) dialer() *websocket.Dialer {
	nd := &net.Dialer{Timeout: w.grace, KeepAlive: 30 * time.Second}
	return &websocket.Dialer{
		Proxy:            http.ProxyFromEnvironment,
		HandshakeTimeout: 2 * w.grace,
		NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := nd.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			wc := &watchedConn{Conn: c, w: w}
			w.track(wc, true)
			return wc, nil
		},
	}
}

// watchedConn is one gateway TCP connection whose reads time out after
// the heartbeat interval plus the grace (the grace alone before HELLO).
type watchedConn struct {
	net.Conn
	w        *stallWatch
	interval time.Duration
	head     []byte // bytes read until HELLO was seen
}

// helloInterval finds HELLO's heartbeat_interval (milliseconds).
var helloInterval = regexp.MustCompile(`"heartbeat_interval"\s*:\s*(\d+)`)

// maxHead bounds the bytes searched for HELLO.
const maxHead = 16 << 10

func (c *watchedConn) Close() error {
	c.w.track(c, false)
	return c.Conn.Close()
}

func (c *watchedConn) Read(b []byte) (int, error) {
	_ = c.SetReadDeadline(time.Now().Add(c.interval + c.w.grace))
	n, err := c.Conn.Read(b)
	if n > 0 && c.interval == 0 && len(c.head) < maxHead {
		c.head = append(c.head, b[:n]...)
		if m := helloInterval.FindSubmatch(c.head); m != nil {
			ms, _ := strconv.Atoi(string(m[1]))
			c.interval, c.head = time.Duration(ms)*time.Millisecond, nil
		}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		if !c.w.stalled.Swap(true) && c.w.onStall != nil {
			c.w.onStall()
		}
	}
	return n, err
}
