package api

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The read timeout bounds reading a request, not a long poll: ?wait= is
// honoured past it.
func TestWaitOutlivesTheReadTimeout(t *testing.T) {
	s, _, _ := newServer(t, "")
	s.Addr = "127.0.0.1:0"
	s.ReadHeaderTimeout, s.ReadTimeout = 100*time.Millisecond, 200*time.Millisecond
	addr := serveOnLoopback(t, s)

	start := time.Now()
	resp, err := http.Post("http://"+addr.String()+"/api/messages?wait=1s", "application/json", strings.NewReader(`{"sender_id":"a","text":"hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if took := time.Since(start); resp.StatusCode != http.StatusAccepted || took < time.Second {
		t.Fatalf("%d %s after %v; want 202 after the whole 1s wait", resp.StatusCode, body, took)
	}
}
