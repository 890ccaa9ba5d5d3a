package budget

import (
	"context"

	"github.com/omega-gateway/omega/providers"
)

// Provider is what the guard stands in front of: the port's calls.
type Provider interface {
	Name() string
	Complete(ctx context.Context, req providers.Request) (providers.Response, error)
}

// Allower decides on a call; *Guard is one.
type Allower interface {
	Allow(ctx context.Context, call providers.Call) (Decision, error)
}

// Wrap puts the guard in front of p: every Complete and Stream is decided
// first, with what the caller tagged its context with
// (providers.WithCall); an untagged call is checked against the limits
// for everything together. A refused call is not made: it fails with
// class OverBudget and the time the limit resets. A guard that cannot
// read the log fails the call as a Server error (retried like one),
// never lets it through unchecked. The result streams when p does.
func Wrap(p Provider, g Allower) Provider {
	gp := gated{inner: p, guard: g}
	if s, ok := p.(providers.Streamer); ok {
		return gatedStreamer{gated: gp, streamer: s}
	}
	return gp
}

type gated struct {
	inner Provider
	guard Allower
}

func (g gated) Name() string { return g.inner.Name() }

// Check is the provider's own, where it has one.
func (g gated) Check(ctx context.Context) error {
	if c, ok := g.inner.(interface{ Check(context.Context) error }); ok {
		return c.Check(ctx)
	}
	return nil
}

func (g gated) Complete(ctx context.Context, req providers.Request) (providers.Response, error) {
	d, err := g.decide(ctx)
	if err != nil {
		return providers.Response{}, err
	}
	defer d.Done()
	return g.inner.Complete(ctx, req)
}

// decide is the guard's decision as the provider error a refusal is.
func (g gated) decide(ctx context.Context) (Decision, error) {
	call, _ := providers.CallOf(ctx)
	d, err := g.guard.Allow(ctx, call)
	if err != nil {
		if ctx.Err() != nil {
			return Decision{}, ctx.Err()
		}
		return Decision{}, &providers.Error{Class: providers.Server, Provider: g.inner.Name(), Msg: "the spending limits could not be checked", Err: err}
	}
	if err := d.Err(g.inner.Name()); err != nil {
		return Decision{}, err
	}
	return d, nil
}

type gatedStreamer struct {
	gated
	streamer providers.Streamer
}

func (g gatedStreamer) Stream(ctx context.Context, req providers.Request, onDelta func(providers.Delta)) (providers.Response, error) {
	d, err := g.decide(ctx)
	if err != nil {
		return providers.Response{}, err
	}
	defer d.Done()
	return g.streamer.Stream(ctx, req, onDelta)
}
