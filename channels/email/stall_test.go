package email

import (
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// freezer forwards TCP connections to a server until frozen: then it
// keeps every connection open and passes nothing, as a server that hangs
// or a network that drops packets silently.
type freezer struct {
	Addr   string
	target string
	mu     sync.Mutex
	frozen bool
	conns  []net.Conn
}

func startFreezer(t *testing.T, target string) *freezer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &freezer{Addr: l.Addr().String(), target: target}
	go f.serve(l)
	t.Cleanup(func() {
		l.Close()
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, c := range f.conns {
			c.Close()
		}
	})
	return f
}

func (f *freezer) serve(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		f.mu.Lock()
		f.conns = append(f.conns, c)
		frozen := f.frozen
		f.mu.Unlock()
		if frozen {
			continue // accepted, never answered
		}
		up, err := net.Dial("tcp", f.target)
		if err != nil {
			c.Close()
			continue
		}
		f.mu.Lock()
		f.conns = append(f.conns, up)
		f.mu.Unlock()
		go f.pipe(c, up)
		go f.pipe(up, c)
	}
}

// pipe copies until frozen, then swallows what comes.
func (f *freezer) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !f.isFrozen() {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (f *freezer) isFrozen() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.frozen
}

func (f *freezer) set(frozen bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.frozen = frozen
}

// A session that goes silent mid-IDLE is noticed within the IDLE refresh
// plus the command timeout, reported as stalled, and replaced by a new
// connection once the server answers again; mail that arrived meanwhile
// is delivered.
func TestSilentSessionIsAStallAndRecovers(t *testing.T) {
	s := startServer(t)
	f := startFreezer(t, s.d.IMAPAddr)
	cfg := s.config()
	cfg.IMAPAddr = f.Addr
	cfg.IdleRefresh, cfg.CommandTimeout = 300*time.Millisecond, 300*time.Millisecond
	ch := newChannel(t, cfg)
	hl := &healthLog{}
	ch.ReportHealth(hl.add)
	b := newInbox()
	run(t, ch, b.deliver)
	first := s.send(t, alice, "one", "before the freeze")
	if in := b.next(t); in.PlatformID != first {
		t.Fatalf("delivered %+v", in)
	}
	waitFor(t, "the first message seen", func() bool { return s.d.Seen(t, bot, first) })
	f.set(true)
	frozenAt := time.Now()
	waitFor(t, "a stall reported", func() bool { return strings.HasPrefix(hl.states(), "stalled") })
	if took := time.Since(frozenAt); took > cfg.IdleRefresh+cfg.CommandTimeout+5*time.Second {
		t.Errorf("the stall took %s to notice", took)
	}
	second := s.send(t, alice, "two", "during the freeze")
	f.set(false)
	if in := b.next(t); in.PlatformID != second {
		t.Fatalf("after the freeze delivered %+v", in)
	}
	waitFor(t, "up reported", func() bool { return strings.HasSuffix(hl.states(), ",up") })
}
