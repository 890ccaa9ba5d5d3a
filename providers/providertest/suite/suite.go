// Package suite is the conformance suite every providers.Provider runs
// against its double (a fake claude script, a local Anthropic or
// OpenAI-compatible server), in the style of eventstore/storetest. It is
// apart from providertest because it imports providers, and the providers
// package's own tests import providertest.
package suite

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/omega-gateway/omega/providers"
	"github.com/omega-gateway/omega/providers/providertest"
)

// Harness builds providers wired to fresh doubles.
type Harness struct {
	// Reply returns a provider whose double answers text.
	Reply func(t *testing.T, text string) providers.Provider
	// Fail returns a provider whose double fails the way class stands for
	// (a 429, a refused key, a server error, a rejected request), or false
	// when the provider has no such failure.
	Fail func(t *testing.T, class providers.Class) (providers.Provider, bool)
	// Hang returns a provider whose double never answers.
	Hang func(t *testing.T) providers.Provider
	// Resume, for providers that keep sessions, returns a provider and the
	// session ids its double was asked to resume so far; nil otherwise.
	Resume func(t *testing.T) (providers.Provider, func() []string)
	// Stream returns a provider whose double writes plan as the provider's
	// streaming protocol does (with plan.Whole, as a double that cannot
	// stream). The provider must be a providers.Streamer.
	Stream func(t *testing.T, plan providertest.StreamPlan) providers.Provider
}

// Run runs the suite.
func Run(t *testing.T, h Harness) {
	t.Run("Replies", func(t *testing.T) { testReply(t, h) })
	t.Run("ErrorClasses", func(t *testing.T) { testClasses(t, h) })
	t.Run("TimeoutIsClassified", func(t *testing.T) { testTimeout(t, h) })
	t.Run("CallerCancelIsNotATimeout", func(t *testing.T) { testCancel(t, h) })
	t.Run("ResumesSession", func(t *testing.T) { testResume(t, h) })
	runStream(t, h)
}

func testReply(t *testing.T, h Harness) {
	p := h.Reply(t, "hello from the double")
	resp, err := p.Complete(t.Context(), providers.Request{Prompt: "hi", WorkDir: t.TempDir()})
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if resp.Text != "hello from the double" || resp.ReplyBytes != len(resp.Text) {
		t.Fatalf("reply %q (%d bytes recorded)", resp.Text, resp.ReplyBytes)
	}
}

func testClasses(t *testing.T, h Harness) {
	for _, class := range []providers.Class{providers.RateLimited, providers.Auth, providers.Server, providers.BadRequest} {
		p, ok := h.Fail(t, class)
		if !ok {
			continue
		}
		for _, door := range doors(p) {
			_, err := door.call(t.Context(), providers.Request{Prompt: "hi", WorkDir: t.TempDir()})
			var pe *providers.Error
			if !errors.As(err, &pe) || pe.Class != class {
				t.Errorf("double failing as %v: %s returned %v", class, door.name, err)
			}
		}
	}
}

func testTimeout(t *testing.T, h Harness) {
	for _, door := range doors(h.Hang(t)) {
		_, err := door.call(t.Context(), providers.Request{Prompt: "hi", WorkDir: t.TempDir(), Timeout: 200 * time.Millisecond})
		if got := providers.ClassOf(err); got != providers.Timeout {
			t.Errorf("%s past its timeout returned %v (class %v)", door.name, err, got)
		}
	}
}

func testCancel(t *testing.T, h Harness) {
	for _, door := range doors(h.Hang(t)) {
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(100*time.Millisecond, cancel)
		_, err := door.call(ctx, providers.Request{Prompt: "hi", WorkDir: t.TempDir()})
		if !errors.Is(err, context.Canceled) || providers.ClassOf(err) == providers.Timeout {
			t.Errorf("%s its caller cancelled returned %v (class %v)", door.name, err, providers.ClassOf(err))
		}
	}
}

func testResume(t *testing.T, h Harness) {
	if h.Resume == nil {
		t.Skip("the provider keeps no sessions")
	}
	p, resumed := h.Resume(t)
	resp, err := p.Complete(t.Context(), providers.Request{Prompt: "and then?", SessionID: "sess-earlier", WorkDir: t.TempDir()})
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if got := resumed(); len(got) != 1 || got[0] != "sess-earlier" {
		t.Fatalf("the double was asked to resume %q, want [sess-earlier]", got)
	}
	if resp.SessionID == "" {
		t.Fatal("no session to resume next time")
	}
}
