package pipeline_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/handlers/apply"
	"github.com/omega-gateway/omega/handlers/effects"
	"github.com/omega-gateway/omega/handlers/senders"
	"github.com/omega-gateway/omega/internal/pgtest"
	"github.com/omega-gateway/omega/providers"
)

// flakyStore fails appends on demand: fail refuses the next appends,
// lose commits the next ones and then reports a failure (an answer lost
// with its connection).
type flakyStore struct {
	testStore
	mu               sync.Mutex
	fail, lose       int
	refused, dropped int
}

func (f *flakyStore) arm(fail, lose int) {
	f.mu.Lock()
	f.fail, f.lose = fail, lose
	f.mu.Unlock()
}

func (f *flakyStore) Append(ctx context.Context, stream string, expected eventstore.ExpectedVersion, evs ...domain.NewEvent) (eventstore.AppendResult, error) {
	f.mu.Lock()
	fail, lose := f.fail > 0, f.fail == 0 && f.lose > 0
	switch {
	case fail:
		f.fail--
		f.refused++
	case lose:
		f.lose--
		f.dropped++
	}
	f.mu.Unlock()
	if fail {
		return eventstore.AppendResult{}, errors.New("injected: connection refused")
	}
	res, err := f.testStore.Append(ctx, stream, expected, evs...)
	if err == nil && lose {
		return eventstore.AppendResult{}, errors.New("injected: connection reset after commit")
	}
	return res, err
}

// hookChannel runs onSend before each send.
type hookChannel struct {
	*fakeChannel
	onSend func()
}

func (c hookChannel) SendText(ctx context.Context, chat, text string) (channels.SendResult, error) {
	c.onSend()
	return c.fakeChannel.SendText(ctx, chat, text)
}

func (c hookChannel) Channel(name string) (channels.Channel, bool) { return c, name == chanName }

// A reply in memory is recorded, however many appends fail after the
// provider answered and after the reply was sent: the turn completes with
// one provider call and one message, on both backends.
func TestReplyIsRecordedThroughFailingAppends(t *testing.T) {
	for _, b := range storeBackends() {
		t.Run(b.name, func(t *testing.T) {
			store, db, dialect := b.open(t, b.dsn(t))
			flaky := &flakyStore{testStore: store}
			p := newPipeline(t, flaky, db, dialect)
			p.driver.Senders = senders.MustNew(flaky, p.reg)
			p.provider.reply = func(context.Context, int, providers.Request) (providers.Response, error) {
				flaky.arm(3, 0) // the session's record, then the reply's
				return providers.Response{Text: "hola", SessionID: "sess-1"}, nil
			}
			p.driver.Channels = hookChannel{p.channel, func() { flaky.arm(2, 1) }}

			id := uuid.NewString()
			p.receive(t, id, "hi")
			if err := p.driver.Run(context.Background(), id); err != nil {
				t.Fatalf("run: %v", err)
			}
			assertOneCallOneReply(t, p, id)
			if flaky.refused != 5 || flaky.dropped != 1 {
				t.Fatalf("%d appends refused and %d answers lost, want 5 and 1", flaky.refused, flaky.dropped)
			}
		})
	}
}

func assertOneCallOneReply(t *testing.T, p *rig, id string) {
	t.Helper()
	if n := len(p.provider.requests()); n != 1 {
		t.Errorf("provider called %d times, want 1", n)
	}
	if got := p.channel.texts(); len(got) != 1 || got[0] != "hola" {
		t.Errorf("sent %q, want one reply", got)
	}
	evs, err := p.store.Load(context.Background(), domain.TurnStream(id), 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{"ProviderCalled", "ProviderReplied", "ReplySent", "TurnCompleted"} {
		if n := countEvents(evs, typ); n != 1 {
			t.Errorf("%d %s events, want 1", n, typ)
		}
	}
}

func countEvents(evs []domain.Event, typ string) int {
	n := 0
	for _, e := range evs {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// A real outage: the connection to PostgreSQL drops while the provider
// works and stays refused for a while (OMEGA_TEST_OUTAGE, default 3s).
// The reply waits in memory and is recorded when the database is back.
func TestReplyIsRecordedThroughPostgresOutage(t *testing.T) {
	outage := 3 * time.Second
	if v := os.Getenv("OMEGA_TEST_OUTAGE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("OMEGA_TEST_OUTAGE: %v", err)
		}
		outage = d
	}
	b := storeBackends()[1]
	for _, markers := range []bool{false, true} {
		t.Run(map[bool]string{false: "reply batched", true: "markers hook"}[markers], func(t *testing.T) {
			u, err := url.Parse(pgtest.DSN(t))
			if err != nil {
				t.Fatal(err)
			}
			proxy := startProxy(t, u.Host)
			u.Host = proxy.addr()
			store, db, dialect := b.open(t, u.String())
			p := newPipeline(t, store, db, dialect)
			if markers {
				fx := effects.MustNew(store, p.reg, p.driver.Read)
				p.driver.Replies = &apply.Markers{Recorder: fx, Profiles: senders.MustNew(store, p.reg), Location: time.UTC, Logger: quiet}
			}
			var down time.Time
			p.provider.reply = func(context.Context, int, providers.Request) (providers.Response, error) {
				down = time.Now()
				proxy.outage(outage)
				return providers.Response{Text: "hola", SessionID: "sess-1"}, nil
			}
			id := uuid.NewString()
			p.receive(t, id, "hi")
			if err := p.driver.Run(context.Background(), id); err != nil {
				t.Fatalf("run: %v", err)
			}
			if took := time.Since(down); took < outage {
				t.Fatalf("turn completed %v after the outage began, before it ended (%v): was there one?", took, outage)
			}
			assertOneCallOneReply(t, p, id)
		})
	}
}

// tcpProxy forwards connections to PostgreSQL and can cut them all and
// refuse new ones for a while, as a restarting server would.
type tcpProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  map[net.Conn]bool
	until  time.Time
}

func startProxy(t *testing.T, target string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	t.Cleanup(func() {
		ln.Close()
		p.cut()
	})
	go p.serve()
	return p
}

func (p *tcpProxy) addr() string { return p.ln.Addr().String() }

func (p *tcpProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		refused := time.Now().Before(p.until)
		p.mu.Unlock()
		if refused {
			c.Close()
			continue
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns[c], p.conns[s] = true, true
		p.mu.Unlock()
		go pipe(c, s)
		go pipe(s, c)
	}
}

func pipe(dst, src net.Conn) {
	_, _ = io.Copy(dst, src)
	dst.Close()
	src.Close()
}

func (p *tcpProxy) outage(d time.Duration) {
	p.mu.Lock()
	p.until = time.Now().Add(d)
	p.mu.Unlock()
	p.cut()
}

func (p *tcpProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// omega is asked to stop while a reply is being sent: the message went
// out, so the turn still records it and completes, on both backends;
// after a restart it is not sent again.
func TestReplySentDuringShutdownIsRecorded(t *testing.T) {
	for _, b := range storeBackends() {
		t.Run(b.name, func(t *testing.T) {
			store, db, dialect := b.open(t, b.dsn(t))
			p := newPipeline(t, store, db, dialect)
			p.provider.reply = func(context.Context, int, providers.Request) (providers.Response, error) {
				return providers.Response{Text: "hola"}, nil
			}
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			p.driver.Channels = hookChannel{p.channel, stop}

			id := uuid.NewString()
			p.receive(t, id, "hi")
			_ = p.driver.Run(ctx, id)
			evs, err := store.Load(context.Background(), domain.TurnStream(id), 1)
			if err != nil {
				t.Fatal(err)
			}
			for _, typ := range []string{"ReplySent", "TurnCompleted"} {
				if n := countEvents(evs, typ); n != 1 {
					t.Fatalf("%d %s events after a stop during the send, want 1", n, typ)
				}
			}
			p.driver.Channels = p.channel
			if err := p.driver.Run(context.Background(), id); err != nil {
				t.Fatalf("run again: %v", err)
			}
			if got := p.channel.texts(); len(got) != 1 {
				t.Fatalf("sent %q, want the reply once", got)
			}
		})
	}
}
