package suite

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/omega-gateway/omega/providers"
	"github.com/omega-gateway/omega/providers/providertest"
)

// door is one way to ask a provider for a reply.
type door struct {
	name string
	call func(ctx context.Context, req providers.Request) (providers.Response, error)
}

// doors are Complete and, when p streams, Stream.
func doors(p providers.Provider) []door {
	ds := []door{{"Complete", p.Complete}}
	if s, ok := p.(providers.Streamer); ok {
		ds = append(ds, door{"Stream", func(ctx context.Context, req providers.Request) (providers.Response, error) {
			return s.Stream(ctx, req, func(providers.Delta) {})
		}})
	}
	return ds
}

func runStream(t *testing.T, h Harness) {
	skip := func(t *testing.T) {
		if h.Stream == nil {
			t.Skip("no streaming double")
		}
	}
	t.Run("StreamDeltasJoinToReply", func(t *testing.T) { skip(t); testStreamJoins(t, h) })
	t.Run("StreamFallsBackToWhole", func(t *testing.T) { skip(t); testStreamWhole(t, h) })
	t.Run("StreamStoppedHalfwayTimesOut", func(t *testing.T) { skip(t); testStreamHalfway(t, h) })
	t.Run("StreamCancelled", func(t *testing.T) { skip(t); testStreamCancel(t, h) })
}

// recorder collects deltas and fails the test for one reported after
// Stream returned.
type recorder struct {
	t      *testing.T
	deltas []providers.Delta
	closed atomic.Bool
}

func (r *recorder) add(d providers.Delta) {
	if r.closed.Load() {
		r.t.Errorf("delta %+v reported after Stream returned", d)
	}
	r.deltas = append(r.deltas, d)
}

func (r *recorder) text() string {
	var b strings.Builder
	for _, d := range r.deltas {
		b.WriteString(d.Text)
	}
	return b.String()
}

func streamer(t *testing.T, p providers.Provider) providers.Streamer {
	t.Helper()
	s, ok := p.(providers.Streamer)
	if !ok {
		t.Fatalf("%s does not stream", p.Name())
	}
	return s
}

func stream(t *testing.T, ctx context.Context, p providers.Provider, req providers.Request, onDelta func(*recorder, providers.Delta)) (providers.Response, *recorder, error) {
	t.Helper()
	rec := &recorder{t: t}
	req.WorkDir = t.TempDir()
	resp, err := streamer(t, p).Stream(ctx, req, func(d providers.Delta) {
		rec.add(d)
		if onDelta != nil {
			onDelta(rec, d)
		}
	})
	rec.closed.Store(true)
	return resp, rec, err
}

func testStreamJoins(t *testing.T, h Harness) {
	plan := providertest.StreamPlan{Text: "Hello there, this reply arrives in pieces.", Every: 5 * time.Millisecond}
	p := h.Stream(t, plan)
	resp, rec, err := stream(t, t.Context(), p, providers.Request{Prompt: "hi"}, nil)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if len(rec.deltas) < 2 {
		t.Errorf("%d deltas, want the reply in pieces", len(rec.deltas))
	}
	if rec.text() != resp.Text || resp.Text != plan.Reply() {
		t.Errorf("deltas join to %q, reply %q, want %q", rec.text(), resp.Text, plan.Reply())
	}
	if !resp.UsageReported || resp.OutputTokens == 0 || resp.ReplyBytes != len(resp.Text) {
		t.Errorf("usage not reported: %+v", resp)
	}
	whole, err := p.Complete(t.Context(), providers.Request{Prompt: "hi", WorkDir: t.TempDir()})
	if err != nil || whole.Text != plan.Reply() {
		t.Errorf("Complete on the same double: %q, %v", whole.Text, err)
	}
}

func testStreamWhole(t *testing.T, h Harness) {
	plan := providertest.StreamPlan{Text: "All of it at once.", Whole: true}
	resp, rec, err := stream(t, t.Context(), h.Stream(t, plan), providers.Request{Prompt: "hi"}, nil)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if len(rec.deltas) != 1 || rec.deltas[0].Text != plan.Reply() || resp.Text != plan.Reply() {
		t.Errorf("deltas %+v and reply %q, want the whole reply %q in one delta", rec.deltas, resp.Text, plan.Reply())
	}
}

func testStreamHalfway(t *testing.T, h Harness) {
	plan := providertest.StreamPlan{Text: "one two three four five six", StopAfter: 3}
	_, rec, err := stream(t, t.Context(), h.Stream(t, plan), providers.Request{Prompt: "hi", Timeout: 500 * time.Millisecond}, nil)
	if got := providers.ClassOf(err); got != providers.Timeout {
		t.Fatalf("a stream that stopped halfway returned %v (class %v), want a timeout", err, got)
	}
	if rec.text() != "one two three" {
		t.Errorf("reported %q before it stopped, want %q", rec.text(), "one two three")
	}
}

func testStreamCancel(t *testing.T, h Harness) {
	plan := providertest.StreamPlan{Text: "one two three four five six", StopAfter: 3}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	_, rec, err := stream(t, ctx, h.Stream(t, plan), providers.Request{Prompt: "hi"}, func(rec *recorder, _ providers.Delta) {
		if rec.text() == "one two" {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) || providers.ClassOf(err) == providers.Timeout {
		t.Fatalf("a stream its caller cancelled returned %v (class %v)", err, providers.ClassOf(err))
	}
	if !strings.HasPrefix(rec.text(), "one two") {
		t.Errorf("reported %q", rec.text())
	}
}
