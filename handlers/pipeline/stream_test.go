package pipeline_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/markers"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/handlers/pipeline"
	"github.com/omega-gateway/omega/internal/live"
	"github.com/omega-gateway/omega/providers"
)

// previewChannel is a channel that previews replies as one message, as
// Telegram's private chats do: the message exists from the first update.
type previewChannel struct {
	*fakeChannel
	pmu      sync.Mutex
	started  int
	updates  []string
	finished []string // "previewID|text"
}

func (c *previewChannel) Channel(name string) (channels.Channel, bool) { return c, name == chanName }

func (c *previewChannel) StartPreview(context.Context, string) (channels.Preview, error) {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	c.started++
	return &fakePreview{ch: c}, nil
}

func (c *previewChannel) FinishPreview(_ context.Context, _, previewID, text string) (channels.SendResult, error) {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	c.finished = append(c.finished, previewID+"|"+text)
	return channels.SendResult{Chunks: 1, PlatformIDs: []string{previewID}}, nil
}

func (c *previewChannel) seen() (started int, updates, finished []string) {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	return c.started, append([]string(nil), c.updates...), append([]string(nil), c.finished...)
}

type fakePreview struct {
	ch *previewChannel
	id string
}

func (p *fakePreview) Update(_ context.Context, text string) error {
	p.ch.pmu.Lock()
	defer p.ch.pmu.Unlock()
	p.ch.updates = append(p.ch.updates, text)
	if p.id == "" {
		p.id = "m-" + string(rune('0'+p.ch.started))
	}
	return nil
}

func (p *fakePreview) ID() string {
	p.ch.pmu.Lock()
	defer p.ch.pmu.Unlock()
	return p.id
}

// streamer streams a scripted reply: each piece is a delta, given a
// moment to show before the next.
type streamer struct {
	fakeProvider
	pieces []providers.Delta
	// after runs once every piece was streamed; its error ends the call.
	after func(ctx context.Context) error
}

func (s *streamer) Stream(ctx context.Context, req providers.Request, onDelta func(providers.Delta)) (providers.Response, error) {
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	var all strings.Builder
	for _, d := range s.pieces {
		onDelta(d)
		all.WriteString(d.Text)
		time.Sleep(5 * time.Millisecond)
	}
	if s.after != nil {
		if err := s.after(ctx); err != nil {
			return providers.Response{}, err
		}
	}
	return providers.Response{Text: all.String()}, nil
}

func texts(ss ...string) []providers.Delta {
	out := make([]providers.Delta, len(ss))
	for i, s := range ss {
		out[i] = providers.Delta{Text: s}
	}
	return out
}

// stripMarkers is the reply hook's visible text, without applying.
type stripMarkers struct{}

func (stripMarkers) Process(_ context.Context, _ *turn.Turn, raw string, _ int) (pipeline.Processed, error) {
	return pipeline.Processed{Text: markers.Parse(raw).Text}, nil
}

func streamingFixture(t *testing.T, s *streamer) (*fixture, *previewChannel, *live.Hub) {
	t.Helper()
	f := newFixture(t)
	ch := &previewChannel{fakeChannel: f.channel}
	hub := live.NewHub(0)
	f.driver.Channels, f.driver.Provider, f.driver.Live = ch, s, hub
	f.driver.Replies = stripMarkers{}
	f.driver.Config.Streaming = true
	return f, ch, hub
}

func TestDriverStreamsTheReplyIntoOnePreviewWithoutMarkers(t *testing.T) {
	reply := []string{"Claro, te lo ", "recuerdo mañana.\nSCHED", "ULE: Llamar | 2026-01-01T09:00:00Z | once\n", "¡Hecho!"}
	s := &streamer{pieces: texts(reply...)}
	f, ch, hub := streamingFixture(t, s)
	var mu sync.Mutex
	var watched []string
	// What a watcher of the turn sees (the HTTP stream): collected on the
	// side while the turn runs.
	id := uuid.NewString()
	sub := hub.Subscribe(id)
	defer sub.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range sub.C() {
			snap := sub.Snapshot()
			mu.Lock()
			watched = append(watched, snap.Text)
			mu.Unlock()
			if snap.Done {
				return
			}
		}
	}()
	f.appendTo(t, domain.TurnStream(id), 0, message("recuérdame llamar"))
	if err := f.driver.Run(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	<-done

	started, updates, finished := ch.seen()
	want := markers.Parse(strings.Join(reply, "")).Text
	if started != 1 || len(finished) != 1 || finished[0] != "m-1|"+want {
		t.Fatalf("previews started %d, finished %q; want one, finished with %q", started, finished, want)
	}
	if sent := f.channel.texts(); len(sent) != 0 {
		t.Errorf("sent %q besides the preview, want nothing", sent)
	}
	if len(updates) < 2 {
		t.Errorf("preview updated %d times (%q), want the reply as it grew", len(updates), updates)
	}
	mu.Lock()
	shown := append(updates, watched...)
	mu.Unlock()
	for _, u := range shown {
		if strings.Contains(u, "SCHEDULE") || strings.Contains(u, "Llamar |") || !strings.HasPrefix(want, u) {
			t.Errorf("shown %q while streaming: not a prefix of the final %q", u, want)
		}
	}
	ps := f.events(t, domain.TurnStream(id))
	st := ofType[turn.ReplyStreamStarted](ps)
	if len(st) == 0 || st[0].VisibleMs <= 0 || st[len(st)-1].PreviewID != "m-1" {
		t.Errorf("ReplyStreamStarted = %+v, want the first text's time and the preview's id", st)
	}
	if got := completion(t, ps).Status; got != turn.StatusOK {
		t.Errorf("status %q, want ok", got)
	}
}

func TestDriverStreamShowsWhatTheAgentDoesInsteadOfNudges(t *testing.T) {
	s := &streamer{pieces: []providers.Delta{{Tool: "Read", ToolTarget: "notes.md"}}}
	s.after = func(context.Context) error { time.Sleep(150 * time.Millisecond); return nil }
	s.pieces = append(s.pieces, providers.Delta{Text: "Tus notas dicen hola."})
	f, ch, _ := streamingFixture(t, s)
	f.driver.Config.StatusFirst, f.driver.Config.StatusEvery = 20*time.Millisecond, 20*time.Millisecond
	f.turn(t, message("lee mis notas"))

	_, updates, finished := ch.seen()
	if len(updates) == 0 || updates[0] != i18n.Activity(lang, "Read", "notes.md") {
		t.Errorf("preview updates %q, want the agent's activity first", updates)
	}
	if len(finished) != 1 || !strings.HasSuffix(finished[0], "|Tus notas dicen hola.") {
		t.Errorf("finished %q, want the reply", finished)
	}
	if sent := f.channel.texts(); len(sent) != 0 {
		t.Errorf("sent %q (nudges?) while the preview showed the work", sent)
	}
}

func TestDriverResumedStreamReplacesThePreviewLeftByACrash(t *testing.T) {
	s := &streamer{pieces: texts("Primera parte, ", "y segunda")}
	f, ch, _ := streamingFixture(t, s)
	id := uuid.NewString()
	f.appendTo(t, domain.TurnStream(id), 0, message("cuéntame algo"))
	// The process dies once the preview is on record, before the reply is.
	ctx, crash := context.WithCancel(context.Background())
	s.after = func(context.Context) error {
		for {
			if len(ofType[turn.ReplyStreamStarted](f.events(t, domain.TurnStream(id)))) > 0 {
				crash()
				return ctx.Err()
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	if err := f.driver.Run(ctx, id); err == nil {
		t.Fatal("the interrupted run completed")
	}
	s.after = nil
	if err := f.driver.Run(context.Background(), id); err != nil {
		t.Fatal(err)
	}

	started, _, finished := ch.seen()
	if started != 1 || len(finished) != 1 || finished[0] != "m-1|Primera parte, y segunda" {
		t.Errorf("previews started %d, finished %q; want the crashed preview replaced, once", started, finished)
	}
	if sent := f.channel.texts(); len(sent) != 0 {
		t.Errorf("sent %q, want no second copy", sent)
	}
	if got := completion(t, f.events(t, domain.TurnStream(id))).Status; got != turn.StatusOK {
		t.Errorf("status %q, want ok", got)
	}
}

func TestDriverStreamThatStopsHalfwayEndsInTheFriendlyError(t *testing.T) {
	s := &streamer{pieces: texts("Estoy escribiendo una respuesta ", "larga que")}
	s.after = func(context.Context) error {
		return &providers.Error{Class: providers.Timeout, Provider: "fake", Msg: "no more tokens for 120s"}
	}
	f, ch, _ := streamingFixture(t, s)
	id := f.turn(t, message("escribe algo"))

	_, _, finished := ch.seen()
	if want := "m-1|" + i18n.Text(lang, i18n.ErrTimeout); len(finished) != 1 || finished[0] != want {
		t.Errorf("finished %q, want the half-written preview replaced by %q", finished, want)
	}
	if got := completion(t, f.events(t, domain.TurnStream(id))).Status; got != turn.StatusError {
		t.Errorf("status %q, want error", got)
	}
}

func TestDriverStreamingOffSendsTheReplyWhole(t *testing.T) {
	s := &streamer{pieces: texts("Hola ", "entera")}
	s.reply = func(context.Context, int, providers.Request) (providers.Response, error) {
		return providers.Response{Text: "Hola entera"}, nil
	}
	f, ch, _ := streamingFixture(t, s)
	f.driver.Config.Streaming = false
	id := f.turn(t, message("hola"))

	if started, updates, finished := ch.seen(); started != 0 || len(updates) != 0 || len(finished) != 0 {
		t.Errorf("preview used with streaming off: %d, %q, %q", started, updates, finished)
	}
	if sent := f.channel.texts(); len(sent) != 1 || sent[0] != "Hola entera" {
		t.Errorf("sent %q, want the whole reply once", sent)
	}
	if n := len(ofType[turn.ReplyStreamStarted](f.events(t, domain.TurnStream(id)))); n != 0 {
		t.Errorf("%d ReplyStreamStarted with streaming off", n)
	}
}

func TestDriverStreamStartsTheAgentsNextMessageOnANewParagraph(t *testing.T) {
	s := &streamer{pieces: []providers.Delta{{Text: "Miro tus notas."}, {Tool: "Read", ToolTarget: "notes.md"}, {Text: "Dicen hola."}}}
	s.after = func(context.Context) error { time.Sleep(30 * time.Millisecond); return nil }
	f, ch, _ := streamingFixture(t, s)
	f.turn(t, message("lee mis notas"))

	_, updates, _ := ch.seen()
	if len(updates) == 0 || updates[len(updates)-1] != "Miro tus notas.\n\nDicen hola." {
		t.Errorf("preview updates %q, want the second message as its own paragraph", updates)
	}
}
