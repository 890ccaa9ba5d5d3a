package telegramtest

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"
)

// Stop shuts the server down as a crashed or restarting API does: open
// connections (a pending long poll included) are dropped and new ones
// are refused until Restart. Updates pushed meanwhile are kept.
func (s *Server) Stop() {
	s.srvMu.Lock()
	defer s.srvMu.Unlock()
	if s.srv == nil {
		return
	}
	s.srv.CloseClientConnections()
	s.srv.Close()
	s.srv = nil
}

// Restart starts the server again on the address it had, with the
// updates and calls it held, as an API that came back does.
func (s *Server) Restart() error {
	s.srvMu.Lock()
	defer s.srvMu.Unlock()
	if s.srv != nil {
		return nil
	}
	ln, err := net.Listen("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		return fmt.Errorf("telegramtest: listen again on %s: %w", s.URL, err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(s.serveHTTP))
	_ = srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	s.srv = srv
	return nil
}

// PollsSince returns when the getUpdates calls that reached the server
// at or after since arrived, so a test can tell how soon a client came
// back.
func (s *Server) PollsSince(since time.Time) []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []time.Time
	for _, at := range s.polls {
		if !at.Before(since) {
			out = append(out, at)
		}
	}
	return out
}
