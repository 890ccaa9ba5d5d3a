package app_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omega-gateway/omega/api"
	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/app/config"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/cmd/rerun"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/markers"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/handlers/pipeline"
	"github.com/omega-gateway/omega/providers"
)

// streamingModel is a model that writes its reply word by word, as an
// OpenAI-compatible server or Claude Code streams it: the first word
// after First, then one word every Every.
type streamingModel struct {
	First, Every time.Duration
	Reply        string
	// gate, when set, holds the stream after half the words until it is
	// closed (a test sees the half first).
	mu   sync.Mutex
	gate chan struct{}
	// FailHalfway stops the stream after half the words with a timeout,
	// as a model that stops sending does.
	FailHalfway bool
}

func (m *streamingModel) Name() string { return "fake-stream" }

func (m *streamingModel) Complete(ctx context.Context, req providers.Request) (providers.Response, error) {
	return m.Stream(ctx, req, func(providers.Delta) {})
}

func (m *streamingModel) Stream(ctx context.Context, _ providers.Request, onDelta func(providers.Delta)) (providers.Response, error) {
	words := strings.SplitAfter(m.Reply, " ")
	wait := m.First
	for i, w := range words {
		if i == len(words)/2 {
			if m.FailHalfway {
				return providers.Response{}, &providers.Error{Class: providers.Timeout, Provider: m.Name(), Msg: "the stream stopped"}
			}
			if gate := m.holdAt(); gate != nil {
				select {
				case <-gate:
				case <-ctx.Done():
					return providers.Response{}, ctx.Err()
				}
			}
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return providers.Response{}, ctx.Err()
		}
		wait = m.Every
		onDelta(providers.Delta{Text: w})
	}
	return providers.Response{Text: m.Reply, Model: "fake-stream"}, nil
}

// hold makes the next replies wait halfway until gate is closed.
func (m *streamingModel) hold(gate chan struct{}) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gate = gate
}

func (m *streamingModel) holdAt() chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.gate
}

// sseEvent is one Server-Sent Event and when it arrived.
type sseEvent struct {
	Name, Data string
	At         time.Time
}

// readStream reads a turn's event stream until its final event, sending
// each event on the way.
func readStream(ctx context.Context, url string, events chan<- sseEvent) error {
	defer close(events)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		return fmt.Errorf("stream answered %s (%s)", resp.Status, resp.Header.Get("Content-Type"))
	}
	sc := bufio.NewScanner(resp.Body)
	var ev sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			ev.Name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			ev.Data = strings.TrimPrefix(line, "data: ")
		case line == "" && ev.Name != "":
			ev.At = time.Now()
			events <- ev
			if ev.Name == "final" {
				return nil
			}
			ev = sseEvent{}
		}
	}
	return fmt.Errorf("stream ended without a final event: %w", sc.Err())
}

// postTurn records a message without waiting for its reply.
func postTurn(t testing.TB, n *node, sender, text string) string {
	t.Helper()
	out := post(t.(*testing.T), n.url+"/api/messages", map[string]string{"sender_id": sender, "text": text})
	if out.TurnID == "" {
		t.Fatalf("no turn id: %+v", out)
	}
	return out.TurnID
}

func streamingNode(t *testing.T, model *streamingModel, vars map[string]string) *node {
	t.Helper()
	v := map[string]string{
		"OMEGA_DATA_DIR": t.TempDir(), "OMEGA_LEASE_TTL": "2s", "OMEGA_STATUS_FIRST": "0s",
		"OMEGA_CLASSIFY": "false", "HOME": t.TempDir(),
	}
	for k, val := range vars {
		v[k] = val
	}
	return startNodeWith(t, v, app.RuntimeOptions{Provider: model})
}

// TestStreamingReplyShowsOverHTTPBeforeTheTurnCompletes: an HTTP client
// on a turn's event stream sees the reply's first words while the model
// still writes, never a marker, and then the final reply.
func TestStreamingReplyShowsOverHTTPBeforeTheTurnCompletes(t *testing.T) {
	reply := "Sure, I will keep that in mind from now on. LESSON: style | keep answers short\nAnything else you would like me to remember today?"
	model := &streamingModel{First: 50 * time.Millisecond, Every: 5 * time.Millisecond, Reply: reply}
	n := streamingNode(t, model, nil)
	say(t, n, "owner", "hello", "30s") // the welcome is not what is measured
	gate := make(chan struct{})
	model.hold(gate)
	id := postTurn(t, n, "owner", "please remember I like short answers")

	events := make(chan sseEvent, 64)
	errc := make(chan error, 1)
	go func() { errc <- readStream(t.Context(), n.url+"/api/turns/"+id+"/stream", events) }()
	var got []sseEvent
	for ev := range events {
		got = append(got, ev)
		if ev.Name == "text" && gate != nil {
			// Text arrived while the model is held mid-reply.
			if out := get(t, n.url+"/api/turns/"+id); out.Status != "pending" {
				t.Errorf("turn %s before the model finished", out.Status)
			}
			close(gate)
			gate = nil
		}
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	want := markers.Parse(reply).Text
	if len(got) < 2 || got[0].Name != "text" || got[len(got)-1].Name != "final" {
		t.Fatalf("events %+v, want text before the final", got)
	}
	for _, ev := range got {
		if strings.Contains(ev.Data, "LESSON") || strings.Contains(ev.Data, "keep answers short") {
			t.Errorf("event %s shows a marker: %s", ev.Name, ev.Data)
		}
		if ev.Name == "text" {
			var te struct{ Text string }
			if err := json.Unmarshal([]byte(ev.Data), &te); err != nil || !strings.HasPrefix(want, te.Text) {
				t.Errorf("text event %s is not a prefix of the reply %q", ev.Data, want)
			}
		}
	}
	var final api.TurnOut
	if err := json.Unmarshal([]byte(got[len(got)-1].Data), &final); err != nil || final.Reply != want || final.Status != turn.StatusOK {
		t.Errorf("final %s, want reply %q", got[len(got)-1].Data, want)
	}
	evs := turnEvents(t, n, id)
	if c := countType(evs, turn.ReplyStreamStarted{}.EventType()); c != 1 {
		t.Errorf("%d ReplyStreamStarted recorded, want 1", c)
	}
	// The HTTP API has no preview message to replace after a crash, so the
	// stream's start is written with the model's reply, not on its own
	// while the model was held.
	var startedAt, repliedAt time.Time
	for _, e := range evs {
		switch e.Type {
		case turn.ReplyStreamStarted{}.EventType():
			startedAt = e.RecordedAt
		case turn.ProviderReplied{}.EventType():
			repliedAt = e.RecordedAt
		}
	}
	if startedAt.IsZero() || !startedAt.Equal(repliedAt) {
		t.Errorf("stream start recorded at %v, the reply at %v: want one write", startedAt, repliedAt)
	}

	// A completed turn answers the final at once.
	again := make(chan sseEvent, 4)
	if err := readStream(t.Context(), n.url+"/api/turns/"+id+"/stream", again); err != nil {
		t.Fatal(err)
	}
	if ev := <-again; ev.Name != "final" {
		t.Errorf("a completed turn's stream starts with %q, want the final", ev.Name)
	}
}

// TestStreamingModelThatStopsHalfwayEndsInTheErrorPath: the half shown
// is replaced by the friendly error.
func TestStreamingModelThatStopsHalfwayEndsInTheErrorPath(t *testing.T) {
	model := &streamingModel{Every: time.Millisecond, Reply: "one two three four five six seven eight", FailHalfway: true}
	n := streamingNode(t, model, nil)
	say(t, n, "owner", "hello", "30s")
	out := say(t, n, "owner", "count for me", "30s")
	if out.Status != turn.StatusError || out.Reply != i18n.Text(i18n.English, i18n.ErrTimeout) {
		t.Errorf("turn %+v, want the friendly timeout message", out)
	}
}

// TestStreamingOffSendsWhole: with OMEGA_STREAMING=off the stream has
// only the final reply, and the turn records no preview.
func TestStreamingOffSendsWhole(t *testing.T) {
	model := &streamingModel{First: 100 * time.Millisecond, Every: time.Millisecond, Reply: "all at once, please"}
	n := streamingNode(t, model, map[string]string{"OMEGA_STREAMING": "off"})
	say(t, n, "owner", "hello", "30s")
	id := postTurn(t, n, "owner", "answer")
	events := make(chan sseEvent, 16)
	if err := readStream(t.Context(), n.url+"/api/turns/"+id+"/stream", events); err != nil {
		t.Fatal(err)
	}
	var names []string
	for ev := range events {
		names = append(names, ev.Name)
	}
	if len(names) != 1 || names[0] != "final" {
		t.Errorf("events %q, want only the final", names)
	}
	if c := countType(turnEvents(t, n, id), turn.ReplyStreamStarted{}.EventType()); c != 0 {
		t.Errorf("%d ReplyStreamStarted with streaming off", c)
	}
}

// previewChannel is a platform double that previews replies as one
// message that grows (as Telegram's private chats do): the message gets
// an id at its first update, and the final reply replaces it.
type previewChannel struct {
	fakeChannel
	pmu      sync.Mutex
	started  int
	finished []string // "previewID|text"
}

func (c *previewChannel) StartPreview(context.Context, string) (channels.Preview, error) {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	c.started++
	return &chatPreview{id: fmt.Sprintf("p-%d", c.started)}, nil
}

func (c *previewChannel) FinishPreview(_ context.Context, _, previewID, text string) (channels.SendResult, error) {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	c.finished = append(c.finished, previewID+"|"+text)
	return channels.SendResult{Chunks: 1, PlatformIDs: []string{previewID}}, nil
}

func (c *previewChannel) previews() (int, []string) {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	return c.started, append([]string(nil), c.finished...)
}

type chatPreview struct {
	mu        sync.Mutex
	id, shown string
}

func (p *chatPreview) Update(_ context.Context, text string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.shown = text
	return nil
}

func (p *chatPreview) ID() string { return p.id }

// TestStreamingCrashMidStreamReplacesThePreview: the process stops while
// the reply is half shown; the next process finishes the turn by
// replacing that preview, and the chat never gets a second copy.
func TestStreamingCrashMidStreamReplacesThePreview(t *testing.T) {
	reply := "Here is the long answer you asked for, written word by word."
	vars := map[string]string{
		"OMEGA_DATA_DIR": t.TempDir(), "OMEGA_LEASE_TTL": "1s", "OMEGA_STATUS_FIRST": "0s",
		"OMEGA_CLASSIFY": "false", "HOME": t.TempDir(),
	}
	chat := &previewChannel{fakeChannel: fakeChannel{name: "testchat"}}
	auth := &pipeline.Auth{Allowed: map[string][]string{"testchat": {"allowed"}}}
	first := &streamingModel{Every: time.Millisecond, Reply: reply}
	n := startNodeWith(t, vars, app.RuntimeOptions{Channels: []channels.Channel{chat}, Auth: auth, Provider: first})
	ctx := t.Context()
	deliver := func(n *node, text string) {
		if err := n.rt.Deliver(ctx, channels.Incoming{Channel: "testchat", SenderID: "allowed", ChatID: "allowed", Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	deliver(n, "hello") // the welcome and a first reply
	waitFor(t, "the first reply", func() bool { _, f := chat.previews(); return len(f) == 1 })
	sentBefore := len(chat.texts("allowed"))

	first.hold(make(chan struct{})) // never released: the process dies first
	deliver(n, "tell me more")
	var tn string
	waitFor(t, "the preview on record", func() bool {
		tn = previewedTurn(t, n, "p-2")
		return tn != ""
	})
	n.stop()

	second := &streamingModel{Every: time.Millisecond, Reply: reply}
	n = startNodeWith(t, vars, app.RuntimeOptions{Channels: []channels.Channel{chat}, Auth: auth, Provider: second})
	waitFor(t, "the resumed turn", func() bool { return countType(turnEvents(t, n, tn), completed) == 1 })

	started, finished := chat.previews()
	if started != 2 || len(finished) != 2 || finished[1] != "p-2|"+reply {
		t.Errorf("previews started %d, finished %q; want the crashed preview p-2 replaced by the reply", started, finished)
	}
	if sent := chat.texts("allowed"); len(sent) != sentBefore {
		t.Errorf("sent %q after the crash, want no second copy", sent[sentBefore:])
	}
}

// previewedTurn finds the turn whose log holds the preview id.
func previewedTurn(t *testing.T, n *node, previewID string) string {
	t.Helper()
	evs, err := n.rt.Store.ReadAll(context.Background(), 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.Type == (turn.ReplyStreamStarted{}).EventType() && strings.Contains(string(e.Data), `"`+previewID+`"`) {
			return domain.TurnIDFromStream(e.StreamID)
		}
	}
	return ""
}

// TestStreamedTurnReRunsIdentical: how the reply showed (its
// ReplyStreamStarted) is not a decision; a re-run, which does not stream,
// compares equal.
func TestStreamedTurnReRunsIdentical(t *testing.T) {
	vars := map[string]string{
		"OMEGA_DATA_DIR": t.TempDir(), "OMEGA_LEASE_TTL": "2s", "OMEGA_STATUS_FIRST": "0s",
		"OMEGA_CLASSIFY": "false", "HOME": t.TempDir(), "OMEGA_TIMEZONE": "UTC",
	}
	model := &streamingModel{Every: time.Millisecond, Reply: "A streamed answer, word by word."}
	n := startNodeWith(t, vars, app.RuntimeOptions{Provider: model})
	say(t, n, "ana", "hello", "30s")
	out := say(t, n, "ana", "answer me", "30s")
	if c := countType(turnEvents(t, n, out.TurnID), turn.ReplyStreamStarted{}.EventType()); c != 1 {
		t.Fatalf("%d ReplyStreamStarted recorded, want 1", c)
	}
	cfg, err := config.LoadFrom(vars)
	if err != nil {
		t.Fatal(err)
	}
	res, err := rerun.Run(t.Context(), n.rt.Store, n.rt.Registry, cfg, out.TurnID, rerun.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Identical {
		t.Errorf("the streamed turn re-ran differently:\n%s", strings.Join(res.Diff, "\n"))
	}
}
