package whatsapp

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/types/events"

	"github.com/omega-gateway/omega/channels"
)

// healthLog records the health changes a channel reports.
type healthLog struct {
	mu  sync.Mutex
	got []channels.Health
}

func (l *healthLog) report(h channels.Health) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, h)
}

func (l *healthLog) states() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var s []string
	for _, h := range l.got {
		s = append(s, fmt.Sprintf("%s/%s/%d", h.Channel, h.State, h.Failures))
	}
	return strings.Join(s, " ")
}

// A dropped connection is reported down once, however many events say so,
// and up once when it is back; unanswered keepalives are a stall.
func TestConnectionDropsAreReportedOncePerChange(t *testing.T) {
	fc := newFakeClient()
	c := newWithClient(Config{}, fc, nil)
	c.minBackoff, c.maxBackoff = 1, 4
	log := &healthLog{}
	c.ReportHealth(log.report)
	_, stop := runStartChannel(t, c)
	waitConnect(t, fc)

	fc.handler(&events.Connected{}) // up already: nothing to report
	fc.handler(&events.Disconnected{})
	fc.handler(&events.ConnectFailure{Reason: events.ConnectFailureServiceUnavailable})
	fc.handler(&events.StreamReplaced{})
	fc.handler(&events.Connected{})
	fc.handler(&events.Connected{})
	if got, want := log.states(), "whatsapp/down/1 whatsapp/up/3"; got != want {
		t.Fatalf("after a drop: %s, want %s", got, want)
	}

	fc.handler(&events.KeepAliveTimeout{ErrorCount: 1})
	fc.handler(&events.KeepAliveTimeout{ErrorCount: 2})
	fc.handler(&events.KeepAliveRestored{})
	if got, want := log.states(), "whatsapp/down/1 whatsapp/up/3 whatsapp/stalled/1 whatsapp/up/2"; got != want {
		t.Fatalf("after keepalive timeouts: %s, want %s", got, want)
	}
	if err := stop(); err != nil {
		t.Fatalf("Start returned %v", err)
	}
}

// A failing connect and a logged-out device both mean nothing arrives.
func TestConnectErrorAndLogoutAreReportedDown(t *testing.T) {
	fc := newFakeClient()
	fc.connectErrs = []error{errors.New("dial: refused")}
	c := newWithClient(Config{}, fc, nil)
	c.minBackoff, c.maxBackoff = 1, 4
	hooked := make(chan struct{}, 1)
	c.OnLoggedOut = func(string) { hooked <- struct{}{} }
	log := &healthLog{}
	c.ReportHealth(log.report)
	_, stop := runStartChannel(t, c)
	waitConnect(t, fc) // refused
	waitConnect(t, fc)
	fc.handler(&events.Connected{})
	fc.handler(&events.LoggedOut{Reason: events.ConnectFailureLoggedOut})
	select {
	case <-hooked:
	case <-time.After(5 * time.Second):
		t.Fatal("OnLoggedOut not called")
	}
	fc.handler(&events.PairSuccess{ID: fc.pn})
	waitConnect(t, fc)
	fc.handler(&events.Connected{})
	if got, want := log.states(), "whatsapp/down/1 whatsapp/up/1 whatsapp/down/1 whatsapp/up/1"; got != want {
		t.Fatalf("reported %s, want %s", got, want)
	}
	log.mu.Lock()
	if e := log.got[2].Err; !strings.Contains(e, "logged out") {
		t.Errorf("logout reported as %q", e)
	}
	log.mu.Unlock()
	if err := stop(); err != nil {
		t.Fatalf("Start returned %v", err)
	}
}

// A socket whose keepalive pings go unanswered twice in a row is dropped
// and dialled again (whatsmeow's own forced reconnect is off); the
// channel stays stalled until the new connection is up.
func TestStalledSocketIsReconnected(t *testing.T) {
	fc := newFakeClient()
	c := newWithClient(Config{}, fc, nil)
	c.minBackoff, c.maxBackoff = 1, 4
	log := &healthLog{}
	c.ReportHealth(log.report)
	_, stop := runStartChannel(t, c)
	waitConnect(t, fc)

	fc.handler(&events.KeepAliveTimeout{ErrorCount: 1})
	select {
	case <-fc.connected:
		t.Fatal("reconnected after one unanswered ping")
	case <-time.After(50 * time.Millisecond):
	}
	fc.handler(&events.KeepAliveTimeout{ErrorCount: stalledPings})
	waitConnect(t, fc)
	fc.handler(&events.Connected{})
	if got, want := log.states(), "whatsapp/stalled/1 whatsapp/up/2"; got != want {
		t.Fatalf("reported %s, want %s", got, want)
	}
	if err := stop(); err != nil {
		t.Fatalf("Start returned %v", err)
	}
}

// With the default waits a reconnect is never more than 5 s away.
func TestReconnectWaitIsCappedAtFiveSeconds(t *testing.T) {
	c := newWithClient(Config{}, newFakeClient(), nil)
	if c.minBackoff != time.Second || c.maxBackoff != 5*time.Second {
		t.Fatalf("reconnect waits %v..%v, want 1s..5s", c.minBackoff, c.maxBackoff)
	}
}
