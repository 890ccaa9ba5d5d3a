package rerun

import (
	"cmp"
	"context"
	"fmt"
	"sync"

	"github.com/omega-gateway/omega/app/config"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/domain/usage"
	"github.com/omega-gateway/omega/handlers/pipeline"
	"github.com/omega-gateway/omega/providers"
	"github.com/omega-gateway/omega/providers/registry"
)

// call is one recorded provider outcome: a reply or a failure.
type call struct {
	resp providers.Response
	err  error
}

// recordedCalls lists the provider outcomes a turn recorded, in order:
// the classification, each plan step's attempts, the direct call's.
func recordedCalls(decoded []domain.Payload) []call {
	var out []call
	called := false
	for _, p := range decoded {
		switch ev := p.(type) {
		case turn.RouteDecided:
			switch {
			case ev.Error == "provider unavailable", ev.Prefilter:
				// No call was made.
			case ev.Error != "":
				out = append(out, call{err: recordedError(providers.Unavailable.String(), ev.Error)})
			default:
				out = append(out, call{resp: usageResponse(ev.Raw, ev.Model, ev.Usage)})
			}
		case turn.PlanStepCompleted:
			out = append(out, call{resp: usageResponse(ev.Reply, "", ev.Usage)})
		case turn.PlanStepFailed:
			out = append(out, call{err: recordedError(ev.Class, ev.Message)})
		case turn.ProviderReplied:
			u := ev.Usage()
			r := usageResponse(ev.Text, ev.Model, &u)
			r.SessionID, r.NumTurns, r.Resumes = ev.SessionID, ev.NumTurns, ev.Resumes
			out = append(out, call{resp: r})
		case turn.ProviderCalled:
			called = true
		case turn.ProviderFailed:
			if called { // else the provider could not work at all: no call (recordedProblem)
				out = append(out, call{err: recordedError(ev.Class, ev.Message)})
			}
			called = false
		}
	}
	return out
}

// recordedProblem is why the turn's provider could not work at all when
// it ran (omega answered with the explanation and called nothing): a
// failure recorded with no call before it. The re-run hands it to the
// driver, which takes the same path.
func recordedProblem(decoded []domain.Payload) error {
	called := false
	for _, p := range decoded {
		switch ev := p.(type) {
		case turn.ProviderCalled:
			called = true
		case turn.ProviderFailed:
			if !called {
				return recordedError(ev.Class, ev.Message)
			}
			called = false
		}
	}
	return nil
}

func usageResponse(text, model string, u *usage.CallUsage) providers.Response {
	r := providers.Response{Text: text, Model: model, ReplyBytes: len(text)}
	if u != nil {
		r.InputTokens, r.OutputTokens, r.CacheReadTokens, r.CacheWriteTokens = u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens
		r.CostUSD, r.UsageReported, r.PromptBytes = u.CostUSD, u.UsageReported, u.PromptBytes
		// The model the call was made with, where it was recorded: a
		// classification that decided on a plan names the plan's model.
		r.Model = cmp.Or(u.Model, model)
	}
	return r
}

// replayedError reads as the recorded message and classifies as the
// recorded class.
type replayedError struct {
	msg   string
	class *providers.Error
}

func (e *replayedError) Error() string { return e.msg }
func (e *replayedError) Unwrap() error { return e.class }

func recordedError(class, msg string) error {
	return &replayedError{msg: msg, class: &providers.Error{Class: classOf(class)}}
}

// classOf is the class a recorded failure named.
func classOf(name string) providers.Class {
	for _, c := range []providers.Class{providers.RateLimited, providers.Auth, providers.Server, providers.Timeout,
		providers.BadRequest, providers.Malformed, providers.Unavailable} {
		if c.String() == name {
			return c
		}
	}
	return providers.Unknown
}

// replayProvider answers with the recorded outcomes, in order; one call
// more than were recorded is itself a difference, answered with an error.
type replayProvider struct {
	name  string
	mu    sync.Mutex
	calls []call
	next  int
	extra int
}

func (p *replayProvider) Name() string                { return p.name }
func (p *replayProvider) Check(context.Context) error { return nil }
func (p *replayProvider) Complete(_ context.Context, req providers.Request) (providers.Response, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.next >= len(p.calls) {
		p.extra++
		return providers.Response{}, &providers.Error{Class: providers.BadRequest, Msg: "re-run: no recorded reply for this call"}
	}
	c := p.calls[p.next]
	p.next++
	if c.err == nil {
		c.resp.Model = firstNonEmpty(c.resp.Model, req.Model)
	}
	return c.resp, c.err
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// recorder is the turn's channel in the scratch run: it sends nothing
// and answers each send as the recorded one went (chunk counts in order).
type recorder struct {
	name   string
	hint   string
	mu     sync.Mutex
	chunks []int
	sent   []string
	photos []error // recorded photo outcomes, in order
	// images: the recorded turn's channel showed images (the turn
	// watched its workspace).
	images bool
}

func (c *recorder) ReceivesImages() bool { return c.images }

func (c *recorder) Name() string                                        { return c.name }
func (c *recorder) FormatHint() string                                  { return c.hint }
func (c *recorder) Start(ctx context.Context, _ channels.Deliver) error { <-ctx.Done(); return nil }
func (c *recorder) Stop(context.Context) error                          { return nil }
func (c *recorder) SendTyping(context.Context, string) error            { return nil }
func (c *recorder) SendPhoto(context.Context, string, channels.Attachment, string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.photos) == 0 {
		return nil
	}
	err := c.photos[0]
	c.photos = c.photos[1:]
	return err
}
func (c *recorder) SendText(_ context.Context, chat, text string) (channels.SendResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sent = append(c.sent, text)
	n := 1
	if len(c.chunks) > 0 {
		n, c.chunks = c.chunks[0], c.chunks[1:]
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("rerun-%d-%d", len(c.sent), i)
	}
	return channels.SendResult{Chunks: n, PlatformIDs: ids}, nil
}

// scratchProvider is the provider a re-run calls: the recorded replies,
// or, live, the configured provider resuming copies of the recorded
// sessions, so that a what-if never writes into a person's session.
func scratchProvider(cfg config.Config, o Options, decoded []domain.Payload) (pipeline.Provider, error) {
	if !o.Live {
		return &replayProvider{name: providerName(decoded, cfg), calls: recordedCalls(decoded)}, nil
	}
	p, err := registry.New(cfg.Provider, o.Logger)
	if err != nil {
		return nil, fmt.Errorf("the configured provider: %w", err)
	}
	return forkingProvider{p}, nil
}

// forkingProvider asks for every resumed session to be forked.
type forkingProvider struct{ providers.Provider }

func (p forkingProvider) Complete(ctx context.Context, req providers.Request) (providers.Response, error) {
	req.ForkSession = true
	return p.Provider.Complete(ctx, req)
}

// waitingProvider answers no call: each waits for its context to end.
type waitingProvider struct{}

func (waitingProvider) Complete(ctx context.Context, _ providers.Request) (providers.Response, error) {
	<-ctx.Done()
	return providers.Response{}, ctx.Err()
}

// providerName is the recorded provider's name, so events that name it
// compare equal.
func providerName(decoded []domain.Payload, cfg config.Config) string {
	for _, p := range decoded {
		switch ev := p.(type) {
		case turn.ProviderCalled:
			return ev.Provider
		case turn.ProviderReplied:
			return ev.Provider
		case turn.ProviderFailed:
			return ev.Provider
		}
	}
	return cfg.Provider.Provider
}
