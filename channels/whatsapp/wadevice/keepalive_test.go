package wadevice

import (
	"testing"

	"go.mau.fi/whatsmeow"
)

// A stalled socket is noticed at the keep-alive interval plus 5 s.
func TestKeepAlivePingDeadline(t *testing.T) {
	if got := whatsmeow.KeepAliveResponseDeadline; got != pingDeadline || got.Seconds() != 5 {
		t.Fatalf("keepalive response deadline %v, want 5s", got)
	}
}
