// Package loopback serves a test double's handler on a loopback port
// that can go down and come back on the same address, as a platform's
// server does when it crashes and restarts: a client configured with the
// URL reaches it again without being told.
package loopback

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/omega-gateway/omega/internal/freeport"
)

// Server is one handler on one loopback address.
type Server struct {
	t       testing.TB
	name    string
	addr    string
	handler http.Handler

	mu  sync.Mutex
	srv *http.Server // nil while stopped
}

// New serves h on a free loopback port until the test ends; name says
// whose server it is in failures.
func New(t testing.TB, name string, h http.Handler) *Server {
	t.Helper()
	// Outside the ephemeral range, so that no connection takes the port
	// while the server is down.
	ln := freeport.Listen(t)
	s := &Server{t: t, name: name, addr: ln.Addr().String(), handler: h}
	s.serve(ln)
	t.Cleanup(s.Stop)
	return s
}

// Addr is the server's host:port, the same across restarts.
func (s *Server) Addr() string { return s.addr }

// URL is the server's base URL, the same across restarts.
func (s *Server) URL() string { return "http://" + s.addr }

func (s *Server) serve(ln net.Listener) {
	srv := &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second}
	s.mu.Lock()
	s.srv = srv
	s.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
}

// Stop closes the listener and every connection as a crash would; a
// stopped server stops again without effect.
func (s *Server) Stop() {
	s.mu.Lock()
	srv := s.srv
	s.srv = nil
	s.mu.Unlock()
	if srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = srv.Shutdown(ctx)
	_ = srv.Close()
}

// Start serves again on the same address, waiting up to 5 s for the
// port to be free.
func (s *Server) Start() {
	s.t.Helper()
	var ln net.Listener
	var err error
	for range 50 {
		if ln, err = net.Listen("tcp", s.addr); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		s.t.Fatalf("%s: listen again on %s: %v", s.name, s.addr, err)
	}
	s.serve(ln)
}
