package whatsapp

import (
	"context"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"
)

// A reply sent while the socket is down waits for the reconnect and is
// sent once, instead of failing as not connected and being lost.
func TestSendWaitsForTheConnection(t *testing.T) {
	fc := newFakeClient()
	c := newWithClient(Config{}, fc, nil)
	c.minBackoff, c.maxBackoff, c.sendRetryEvery = 1, 4, time.Millisecond
	_, stop := runStartChannel(t, c)
	waitConnect(t, fc)
	fc.mu.Lock()
	fc.sendErr = whatsmeow.ErrNotConnected
	fc.mu.Unlock()
	done := make(chan error, 1)
	go func() {
		_, err := c.SendText(context.Background(), "4915112345678", "held reply")
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("SendText returned %v while disconnected, want it to wait", err)
	case <-time.After(50 * time.Millisecond):
	}
	fc.mu.Lock()
	fc.sendErr = nil
	fc.mu.Unlock()
	if err := <-done; err != nil {
		t.Fatalf("SendText after the reconnect: %v", err)
	}
	fc.mu.Lock()
	n := len(fc.sent)
	fc.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d messages sent, want the reply once", n)
	}
	if err := stop(); err != nil {
		t.Fatalf("Start returned %v", err)
	}
}
