package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/eventstore/sqlite"
	"github.com/omega-gateway/omega/handlers/pipeline"
	"github.com/omega-gateway/omega/projections/engine"
	"github.com/omega-gateway/omega/projections/readmodel"
	"github.com/omega-gateway/omega/providers"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// The tests' sender was greeted before and speaks Spanish, so every text
// the driver sends must come from the Spanish catalogue.
const (
	chanName = "test"
	senderID = "s1"
	lang     = "es"
)

// fakeChannel records what is sent and can refuse every send.
// ReceivesImages: the fake shows images, as Telegram does.
func (*fakeChannel) ReceivesImages() bool { return true }

type fakeChannel struct {
	mu       sync.Mutex
	sent     []string
	attempts int
	err      error
}

func (c *fakeChannel) Name() string                                        { return chanName }
func (c *fakeChannel) Start(ctx context.Context, _ channels.Deliver) error { <-ctx.Done(); return nil }
func (c *fakeChannel) SendTyping(context.Context, string) error            { return nil }
func (c *fakeChannel) Stop(context.Context) error                          { return nil }
func (c *fakeChannel) SendPhoto(context.Context, string, channels.Attachment, string) error {
	return nil
}

func (c *fakeChannel) SendText(_ context.Context, _, text string) (channels.SendResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.attempts++
	if c.err != nil {
		return channels.SendResult{}, c.err
	}
	c.sent = append(c.sent, text)
	return channels.SendResult{Chunks: 1}, nil
}

func (c *fakeChannel) texts() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.sent...)
}

func (c *fakeChannel) Channel(name string) (channels.Channel, bool) { return c, name == chanName }

// fakeProvider answers with reply (calls are numbered from 1); it records
// every request.
type fakeProvider struct {
	mu    sync.Mutex
	reqs  []providers.Request
	reply func(ctx context.Context, call int, req providers.Request) (providers.Response, error)
}

func (p *fakeProvider) Name() string { return "fake" }

func (p *fakeProvider) Complete(ctx context.Context, req providers.Request) (providers.Response, error) {
	p.mu.Lock()
	p.reqs = append(p.reqs, req)
	call := len(p.reqs)
	p.mu.Unlock()
	if p.reply == nil {
		return providers.Response{Text: "hola"}, nil
	}
	return p.reply(ctx, call, req)
}

func (p *fakeProvider) requests() []providers.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]providers.Request(nil), p.reqs...)
}

type fixture struct {
	store    *sqlite.Store
	reg      *domain.Registry
	channel  *fakeChannel
	provider *fakeProvider
	driver   *pipeline.Driver
	engine   *engine.Engine
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "omega.db"), sqlite.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	p := newPipeline(t, s, s.DB(), readmodel.SQLite)
	return &fixture{store: s, reg: p.reg, engine: p.engine, channel: p.channel, provider: p.provider, driver: p.driver}
}

func (f *fixture) appendSender(t *testing.T, ps ...domain.Payload) {
	t.Helper()
	ctx := context.Background()
	stream := sender.SenderStream(chanName, senderID)
	v, err := f.store.StreamVersion(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	f.appendTo(t, stream, v, ps...)
}

func (f *fixture) appendTo(t *testing.T, stream string, version int64, ps ...domain.Payload) {
	t.Helper()
	evs, err := domain.NewEvents(domain.Metadata{Channel: chanName, Sender: senderID}, ps...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.Append(context.Background(), stream, eventstore.Exact(version), evs...); err != nil {
		t.Fatal(err)
	}
}

func message(text string) turn.MessageReceived {
	return turn.MessageReceived{Channel: chanName, SenderID: senderID, ChatID: "chat-1", Text: text, Trusted: true, ReceivedAt: time.Now()}
}

// turn records the given opening events of a new turn and runs the driver.
func (f *fixture) turn(t *testing.T, opening ...domain.Payload) string {
	t.Helper()
	id := uuid.NewString()
	f.appendTo(t, domain.TurnStream(id), 0, opening...)
	if err := f.driver.Run(context.Background(), id); err != nil {
		t.Fatalf("run turn: %v", err)
	}
	return id
}

// events returns the decoded payloads of a stream, in order.
func (f *fixture) events(t *testing.T, stream string) []domain.Payload {
	t.Helper()
	evs, err := f.store.Load(context.Background(), stream, 1)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]domain.Payload, len(evs))
	for i, e := range evs {
		if out[i], err = f.reg.Decode(e); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func ofType[T domain.Payload](ps []domain.Payload) []T {
	var out []T
	for _, p := range ps {
		if v, ok := p.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

func completion(t *testing.T, ps []domain.Payload) turn.TurnCompleted {
	t.Helper()
	done := ofType[turn.TurnCompleted](ps)
	if len(done) != 1 {
		t.Fatalf("got %d TurnCompleted, want 1; events: %+v", len(done), ps)
	}
	return done[0]
}

func TestDriverProviderErrorIsExplainedInTheSendersLanguage(t *testing.T) {
	tests := []struct {
		class providers.Class
		key   i18n.Key
	}{
		{providers.RateLimited, i18n.ErrRateLimited},
		{providers.Auth, i18n.ErrAuth},
		{providers.Server, i18n.ErrServer},
		{providers.Timeout, i18n.ErrTimeout},
		{providers.BadRequest, i18n.ErrBadRequest},
		{providers.Malformed, i18n.ErrMalformed},
		{providers.Unknown, i18n.ErrUnknown},
		{providers.Unavailable, i18n.ProviderUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.class.String(), func(t *testing.T) {
			f := newFixture(t)
			f.provider.reply = func(context.Context, int, providers.Request) (providers.Response, error) {
				return providers.Response{}, &providers.Error{Class: tt.class, Provider: "fake", Msg: "secret-free detail"}
			}
			id := f.turn(t, message("hola, ¿qué tal?"))

			want := i18n.Text(lang, tt.key)
			if got := f.channel.texts(); len(got) != 1 || got[0] != want {
				t.Errorf("sent %q, want only %q", got, want)
			}
			ps := f.events(t, domain.TurnStream(id))
			failed := ofType[turn.ProviderFailed](ps)
			if len(failed) != 1 || failed[0].Class != tt.class.String() || failed[0].RetryFullContext {
				t.Errorf("ProviderFailed = %+v, want one of class %q without retry", failed, tt.class)
			}
			if n := len(f.provider.requests()); n != 1 {
				t.Errorf("provider called %d times, want 1", n)
			}
			if got := completion(t, ps).Status; got != turn.StatusError {
				t.Errorf("status %q, want %q", got, turn.StatusError)
			}
		})
	}
}

func TestDriverFailedResumeRetriesOnceWithFullContext(t *testing.T) {
	f := newFixture(t)
	f.provider.reply = func(_ context.Context, call int, req providers.Request) (providers.Response, error) {
		switch {
		case req.SessionID != "":
			return providers.Response{}, &providers.Error{Class: providers.Server, Provider: "fake", Msg: "no such session"}
		case call == 1: // the conversation's first turn starts sess-old
			return providers.Response{Text: "hola", SessionID: "sess-old"}, nil
		}
		return providers.Response{Text: "respuesta", SessionID: "sess-new"}, nil
	}
	// Only a conversation still active resumes its session.
	f.turn(t, message("hola"))
	if err := f.engine.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	id := f.turn(t, message("sigue con lo de ayer"))

	reqs := f.provider.requests()[1:]
	if len(reqs) != 2 {
		t.Fatalf("provider called %d times, want 2", len(reqs))
	}
	if reqs[0].SessionID != "sess-old" {
		t.Errorf("first call resumed %q, want sess-old", reqs[0].SessionID)
	}
	if reqs[1].SessionID != "" || reqs[1].System == "" || !strings.Contains(reqs[1].Prompt, "sigue con lo de ayer") {
		t.Errorf("second call = %+v, want no session, the system prompt and the message", reqs[1])
	}
	ps := f.events(t, domain.TurnStream(id))
	called := ofType[turn.ProviderCalled](ps)
	if len(called) != 2 || called[0].FullContext || !called[1].FullContext || called[1].Attempt != 2 {
		t.Errorf("ProviderCalled = %+v, want a resume then a full-context attempt 2", called)
	}
	if failed := ofType[turn.ProviderFailed](ps); len(failed) != 1 || !failed[0].RetryFullContext {
		t.Errorf("ProviderFailed = %+v, want one with RetryFullContext", failed)
	}
	if cleared := ofType[sender.SessionCleared](f.events(t, sender.SenderStream(chanName, senderID))); len(cleared) != 1 {
		t.Errorf("SessionCleared recorded %d times, want 1", len(cleared))
	}
	if got := f.channel.texts(); len(got) != 2 || got[1] != "respuesta" {
		t.Errorf("sent %q, want the first turn's reply and the reply only", got)
	}
	if got := completion(t, ps).Status; got != turn.StatusOK {
		t.Errorf("status %q, want ok", got)
	}
}

func TestDriverUnavailableProviderIsExplainedWithoutACall(t *testing.T) {
	f := newFixture(t)
	f.driver.Config.ProviderProblem = errors.New("claude: executable not found; install it")
	id := f.turn(t, message("hola"))

	if n := len(f.provider.requests()); n != 0 {
		t.Errorf("provider called %d times, want none", n)
	}
	want := i18n.Text(lang, i18n.ProviderUnavailable)
	if got := f.channel.texts(); len(got) != 1 || got[0] != want {
		t.Errorf("sent %q, want %q", got, want)
	}
	ps := f.events(t, domain.TurnStream(id))
	if failed := ofType[turn.ProviderFailed](ps); len(failed) != 1 || failed[0].Class != providers.Unavailable.String() {
		t.Errorf("ProviderFailed = %+v, want one unavailable", failed)
	}
	if got := completion(t, ps).Status; got != turn.StatusError {
		t.Errorf("status %q, want error", got)
	}
}

func TestDriverSilentGroupReplyIsSuppressed(t *testing.T) {
	f := newFixture(t)
	f.provider.reply = func(context.Context, int, providers.Request) (providers.Response, error) {
		return providers.Response{Text: " SILENT\n"}, nil
	}
	m := message("charla del grupo")
	m.IsGroup = true
	id := f.turn(t, m)

	if got := f.channel.texts(); len(got) != 0 {
		t.Errorf("sent %q, want nothing", got)
	}
	ps := f.events(t, domain.TurnStream(id))
	if n := len(ofType[turn.TurnSuppressed](ps)); n != 1 {
		t.Errorf("TurnSuppressed recorded %d times, want 1", n)
	}
	if n := len(ofType[turn.ReplySent](ps)); n != 0 {
		t.Errorf("ReplySent recorded %d times, want none", n)
	}
	if got := completion(t, ps).Status; got != turn.StatusSuppressed {
		t.Errorf("status %q, want suppressed", got)
	}
}

func TestDriverAttachmentsAreReferencedAndRemoved(t *testing.T) {
	f := newFixture(t)
	inbox := filepath.Join(t.TempDir(), "inbox", "turn-1")
	if err := os.MkdirAll(inbox, 0o700); err != nil {
		t.Fatal(err)
	}
	photo, doc := filepath.Join(inbox, "photo.jpg"), filepath.Join(inbox, "notes.pdf")
	for _, p := range []string{photo, doc} {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	m := message("mira esto")
	m.Attachments = []turn.AttachmentRef{{Name: "photo.jpg", MIME: "image/jpeg", Path: photo, Size: 1}, {Name: "notes.pdf", MIME: "application/pdf", Path: doc, Size: 1}}
	id := f.turn(t, m)

	reqs := f.provider.requests()
	if len(reqs) != 1 {
		t.Fatalf("provider called %d times, want 1", len(reqs))
	}
	for _, want := range []string{"[Attached image: " + photo + "]", "[Attached file: " + doc + "]", "mira esto"} {
		if !strings.Contains(reqs[0].Prompt, want) {
			t.Errorf("prompt %q lacks %q", reqs[0].Prompt, want)
		}
	}
	for _, p := range []string{photo, doc, inbox} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still there after the turn (err %v)", p, err)
		}
	}
	removed := ofType[turn.AttachmentsRemoved](f.events(t, domain.TurnStream(id)))
	if len(removed) != 1 || strings.Join(removed[0].Paths, ",") != photo+","+doc {
		t.Errorf("AttachmentsRemoved = %+v, want both paths", removed)
	}
}

func TestDriverStatusMessagesWhileTheProviderIsSlow(t *testing.T) {
	first, _ := i18n.StatusMessages(lang)
	tests := []struct {
		name      string
		delay     time.Duration
		wantNudge bool
	}{
		{"slow", 200 * time.Millisecond, true},
		{"fast", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.driver.Config.StatusFirst, f.driver.Config.StatusEvery = 50*time.Millisecond, time.Hour
			f.provider.reply = func(ctx context.Context, _ int, _ providers.Request) (providers.Response, error) {
				select {
				case <-time.After(tt.delay):
				case <-ctx.Done():
				}
				return providers.Response{Text: "listo"}, nil
			}
			id := f.turn(t, message("haz algo largo"))

			nudges := 0
			for _, s := range f.channel.texts() {
				if s == first {
					nudges++
				}
			}
			replied := ofType[turn.ProviderReplied](f.events(t, domain.TurnStream(id)))
			if len(replied) != 1 {
				t.Fatalf("ProviderReplied recorded %d times, want 1", len(replied))
			}
			if tt.wantNudge && nudges < 1 {
				t.Errorf("no status message sent during a %v call; sent %q", tt.delay, f.channel.texts())
			}
			if !tt.wantNudge && nudges != 0 {
				t.Errorf("%d status message(s) sent for a fast call", nudges)
			}
			if replied[0].StatusMessages != nudges {
				t.Errorf("ProviderReplied.StatusMessages = %d, sent %d", replied[0].StatusMessages, nudges)
			}
		})
	}
}

func TestDriverBlockedChannelIsRecordedAfterOneAttempt(t *testing.T) {
	f := newFixture(t)
	f.channel.err = fmt.Errorf("send to chat-1: %w", channels.ErrBlocked)
	id := f.turn(t, message("hola"))

	if f.channel.attempts != 1 {
		t.Errorf("%d send attempts, want 1", f.channel.attempts)
	}
	ps := f.events(t, domain.TurnStream(id))
	failed := ofType[turn.ReplyFailed](ps)
	if len(failed) != 1 || failed[0].Class != "blocked" {
		t.Errorf("ReplyFailed = %+v, want one of class blocked", failed)
	}
	if got := completion(t, ps).Status; got != turn.StatusUndelivered {
		t.Errorf("status %q, want undelivered", got)
	}
}

func TestDriverResumesACallInterruptedByACrash(t *testing.T) {
	f := newFixture(t)
	// What a process that died during the provider call left behind.
	id := f.turn(t, message("hola"),
		turn.AccessGranted{Reason: "owner channel test"},
		turn.ContextBuilt{ConversationID: "c1", Language: lang, Model: "fast", System: "sys", Prompt: "hola", Message: "hola"},
		turn.ProviderCalled{Provider: "fake", Model: "fast", Attempt: 1},
	)

	if n := len(f.provider.requests()); n != 1 {
		t.Errorf("provider called %d times after the restart, want 1", n)
	}
	ps := f.events(t, domain.TurnStream(id))
	if called := ofType[turn.ProviderCalled](ps); len(called) != 2 || called[1].Attempt != 2 {
		t.Errorf("ProviderCalled = %+v, want the crashed attempt and attempt 2", called)
	}
	if got := f.channel.texts(); len(got) != 1 || got[0] != "hola" {
		t.Errorf("sent %q, want the reply once", got)
	}
	if got := completion(t, ps).Status; got != turn.StatusOK {
		t.Errorf("status %q, want ok", got)
	}
}

// rebuild constructs the fixture's driver again with change made to its
// collaborators, in place, so that whoever holds the driver sees it: the
// driver builds its parts from them once.
func (f *fixture) rebuild(t *testing.T, change func(*pipeline.Driver)) {
	t.Helper()
	cfg := *f.driver
	change(&cfg)
	d, err := pipeline.NewDriver(cfg)
	if err != nil {
		t.Fatal(err)
	}
	*f.driver = *d
}
