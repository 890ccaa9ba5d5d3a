package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/summary"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/handlers/pipeline"
	"github.com/omega-gateway/omega/internal/pgtest"
	"github.com/omega-gateway/omega/projections"
	"github.com/omega-gateway/omega/prompts"
	"github.com/omega-gateway/omega/providers"
)

// summaryProvider is a provider double that tells summaries and fact
// extractions from turns by their prompt, counts each, and keeps every
// turn request so a test can see what the model was given.
type summaryProvider struct {
	mu        sync.Mutex
	summary   func() (string, error)
	facts     string
	delay     time.Duration // for summaries, so two processes race
	summaries int
	factCalls int
	turns     []providers.Request
}

func (p *summaryProvider) Name() string { return "fake" }

func (p *summaryProvider) Complete(ctx context.Context, req providers.Request) (providers.Response, error) {
	ps := prompts.Defaults()
	switch {
	case strings.HasPrefix(req.Prompt, ps.Summarize()):
		p.mu.Lock()
		p.summaries++
		p.mu.Unlock()
		select {
		case <-time.After(p.delay):
		case <-ctx.Done():
			return providers.Response{}, ctx.Err()
		}
		text, err := p.summary()
		return providers.Response{Text: text}, err
	case strings.HasPrefix(req.Prompt, ps.Facts()):
		p.mu.Lock()
		p.factCalls++
		p.mu.Unlock()
		return providers.Response{Text: p.facts}, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.turns = append(p.turns, req)
	session := req.SessionID
	if session == "" {
		session = fmt.Sprintf("sess-%d", len(p.turns))
	}
	lines := strings.Split(strings.TrimSpace(req.Prompt), "\n")
	return providers.Response{Text: "echo: " + lines[len(lines)-1], SessionID: session}, nil
}

func (p *summaryProvider) counts() (summaries, facts int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.summaries, p.factCalls
}

func (p *summaryProvider) lastTurn() providers.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.turns[len(p.turns)-1]
}

func startSummaryNode(t *testing.T, vars map[string]string, p *summaryProvider) *node {
	t.Helper()
	auth := &pipeline.Auth{Allowed: map[string][]string{}}
	return startNodeWith(t, vars, app.RuntimeOptions{Auth: auth, Provider: p})
}

func streamEvents(t *testing.T, n *node, stream string) []domain.Event {
	t.Helper()
	evs, err := n.rt.Store.Load(context.Background(), stream, 1)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func decodeLast[T any](t *testing.T, evs []domain.Event, typ string) T {
	t.Helper()
	var v T
	for _, e := range evs {
		if e.Type == typ {
			if err := json.Unmarshal(e.Data, &v); err != nil {
				t.Fatal(err)
			}
		}
	}
	return v
}

// contextOf is the turn's recorded context with its texts resolved (it
// records the prompt by reference).
func contextOf(t *testing.T, n *node, tn string) turn.ContextBuilt {
	t.Helper()
	c := decodeLast[turn.ContextBuilt](t, turnEvents(t, n, tn), "ContextBuilt")
	full, err := n.rt.PromptTexts.Resolve(context.Background(), tn, c)
	if err != nil {
		t.Fatalf("resolve the context of turn %s: %v", tn, err)
	}
	return full
}

// An idle conversation is summarized once with the fast model, its facts
// are validated (the bad ones recorded with the reason), its session is
// cleared, and the next message starts a new conversation whose prompt
// carries the summary and resumes no session.
func TestIdleConversationIsSummarizedOnce(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			p := &summaryProvider{
				summary: func() (string, error) { return "Ana planned a trip to Porto in May.", nil },
				facts:   "name: Ana\nhome_city: Madrid\nage: 41\nbudget: $300\nwelcomed: yes",
			}
			vars := baseVars(t, b, "")
			vars["OMEGA_CONVERSATION_IDLE"] = "1s"
			n := startSummaryNode(t, vars, p)
			first := say(t, n, "ana", "hello, I am Ana from Madrid", "20s")
			if first.Status != "ok" {
				t.Fatalf("first turn: %+v", first)
			}
			conv := contextOf(t, n, first.TurnID).ConversationID
			stream := summary.SummaryStream(conv)
			waitFor(t, "the conversation closed", func() bool {
				return countType(streamEvents(t, n, stream), "ConversationClosed") == 1
			})
			evs := streamEvents(t, n, stream)
			for typ, want := range map[string]int{"SummaryRequested": 1, "SummaryWritten": 1, "FactsExtracted": 1, "ConversationClosed": 1} {
				if got := countType(evs, typ); got != want {
					t.Fatalf("%s recorded %d times, want %d", typ, got, want)
				}
			}
			facts := decodeLast[summary.FactsExtracted](t, evs, "FactsExtracted")
			if len(facts.Accepted) != 2 || len(facts.Rejected) != 3 {
				t.Fatalf("facts accepted %v rejected %v", facts.Accepted, facts.Rejected)
			}
			closed := decodeLast[turn.ConversationClosed](t, evs, "ConversationClosed")
			if closed.Summary != "Ana planned a trip to Porto in May." || closed.Reason != "idle" || closed.Messages != 2 {
				t.Fatalf("closed: %+v", closed)
			}
			profile := streamEvents(t, n, sender.SenderStream("http", "ana"))
			recorded := map[string]string{}
			for _, e := range profile {
				if e.Type == "FactRecorded" {
					var f sender.FactRecorded
					_ = json.Unmarshal(e.Data, &f)
					if f.Source == "summarizer" {
						recorded[f.Key] = f.Value
					}
				}
			}
			if len(recorded) != 2 || recorded["name"] != "Ana" || recorded["home_city"] != "Madrid" {
				t.Fatalf("facts on the sender stream: %v", recorded)
			}
			if countType(profile, "SessionCleared") != 1 {
				t.Fatalf("session not cleared at closure")
			}

			// The watcher keeps running past more idle periods; the summary
			// is not asked for again.
			time.Sleep(2500 * time.Millisecond)
			if s, f := p.counts(); s != 1 || f != 1 {
				t.Fatalf("provider asked for %d summaries and %d fact extractions, want 1 and 1", s, f)
			}

			next := say(t, n, "ana", "what next?", "20s")
			c := contextOf(t, n, next.TurnID)
			if c.ConversationID == conv || c.SessionID != "" || c.Continuation || len(c.History) != 0 {
				t.Fatalf("after the summary: conversation %s (was %s), session %q, history %d", c.ConversationID, conv, c.SessionID, len(c.History))
			}
			req := p.lastTurn()
			if req.SessionID != "" || !strings.Contains(req.System, "Recent conversation summaries:\n- Ana planned a trip to Porto in May.") {
				t.Fatalf("the next conversation's request: session %q, system:\n%s", req.SessionID, req.System)
			}
			waitFor(t, "the summary in the read model", func() bool {
				return queryInt(t, n, `SELECT COUNT(*) FROM summaries WHERE conversation_id = $1`, conv) == 1
			})
			if diffs, err := n.rt.Engine.Verify(context.Background(), app.Projections(), nil); err != nil || len(diffs) > 0 {
				t.Fatalf("verify: %v %+v", err, diffs)
			}
		})
	}
}

// A summary that fails closes the conversation with the seed's fallback;
// an empty conversation closes without any provider call.
func TestSummaryFallbackAndEmptyConversation(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			p := &summaryProvider{summary: func() (string, error) { return "", errors.New("model unavailable") }, facts: "none"}
			vars := baseVars(t, b, "")
			vars["OMEGA_CONVERSATION_IDLE"] = "1s"
			n := startSummaryNode(t, vars, p)
			tn := say(t, n, "bo", "hi there", "20s")
			stream := summary.SummaryStream(contextOf(t, n, tn.TurnID).ConversationID)
			waitFor(t, "the conversation closed", func() bool {
				return countType(streamEvents(t, n, stream), "ConversationClosed") == 1
			})
			evs := streamEvents(t, n, stream)
			written := decodeLast[summary.SummaryWritten](t, evs, "SummaryWritten")
			closed := decodeLast[turn.ConversationClosed](t, evs, "ConversationClosed")
			if !written.Fallback || !strings.Contains(written.Error, "model unavailable") || closed.Summary != "(2 messages, summary unavailable)" {
				t.Fatalf("written %+v, closed %+v", written, closed)
			}
			if facts := decodeLast[summary.FactsExtracted](t, evs, "FactsExtracted"); len(facts.Accepted)+len(facts.Rejected) != 0 {
				t.Fatalf("\"none\" gave facts: %+v", facts)
			}

			before, _ := p.counts()
			empty := projections.OpenConversation{ID: "empty-conversation", Channel: "http", SenderID: "bo"}
			if err := n.rt.Summarizer.Summarize(context.Background(), empty, "idle"); err != nil {
				t.Fatal(err)
			}
			if after, _ := p.counts(); after != before {
				t.Fatalf("an empty conversation cost %d provider calls", after-before)
			}
			evs = streamEvents(t, n, summary.SummaryStream(empty.ID))
			if len(evs) != 2 || decodeLast[turn.ConversationClosed](t, evs, "ConversationClosed").Summary != summary.EmptyConversationSummary {
				t.Fatalf("empty conversation events: %v", evs)
			}
		})
	}
}

// Two processes on one PostgreSQL both see the idle conversations; each is
// summarized by one of them, once.
func TestTwoProcessesSummarizeOnce(t *testing.T) {
	p := &summaryProvider{summary: func() (string, error) { return "a summary", nil }, facts: "none", delay: 200 * time.Millisecond}
	vars := baseVars(t, backend{"postgres", func(t *testing.T) map[string]string {
		return map[string]string{"OMEGA_DATABASE_URL": pgtest.DSN(t)}
	}}, "")
	vars["OMEGA_CONVERSATION_IDLE"] = "1s"
	a := startSummaryNode(t, vars, p)
	startSummaryNode(t, vars, p)
	const senders = 6
	var convs []string
	for i := range senders {
		tn := say(t, a, fmt.Sprintf("user%d", i), "hello", "20s")
		convs = append(convs, contextOf(t, a, tn.TurnID).ConversationID)
	}
	waitFor(t, "every conversation closed", func() bool {
		return queryInt(t, a, `SELECT COUNT(*) FROM summaries`) == senders
	})
	time.Sleep(2 * time.Second) // both watchers look again
	if s, f := p.counts(); s != senders || f != senders {
		t.Fatalf("%d summaries and %d fact extractions for %d conversations", s, f, senders)
	}
	for _, c := range convs {
		evs := streamEvents(t, a, summary.SummaryStream(c))
		if countType(evs, "SummaryRequested") != 1 || countType(evs, "SummaryWritten") != 1 || countType(evs, "ConversationClosed") != 1 {
			t.Fatalf("conversation %s: %d events", c, len(evs))
		}
	}
}

// Two processes shutting down together both summarize every open
// conversation: the lease and the claim on the summary stream make each
// summary one provider call.
func TestTwoProcessesShuttingDownSummarizeOnce(t *testing.T) {
	p := &summaryProvider{summary: func() (string, error) { return "a summary", nil }, facts: "none", delay: 200 * time.Millisecond}
	vars := baseVars(t, backend{"postgres", func(t *testing.T) map[string]string {
		return map[string]string{"OMEGA_DATABASE_URL": pgtest.DSN(t)}
	}}, "")
	a, b := startSummaryNode(t, vars, p), startSummaryNode(t, vars, p)
	const senders = 6
	for i := range senders {
		say(t, a, fmt.Sprintf("user%d", i), "hello", "20s")
	}
	waitFor(t, "the conversations in the read model", func() bool {
		return queryInt(t, a, `SELECT COUNT(*) FROM conversations WHERE messages = 2`) == senders
	})
	var wg sync.WaitGroup
	for _, n := range []*node{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n.rt.Summarizer.SummarizeOpen(context.Background())
		}()
	}
	wg.Wait()
	if s, f := p.counts(); s != senders || f != senders {
		t.Fatalf("%d summaries and %d fact extractions for %d conversations", s, f, senders)
	}
	waitFor(t, "every conversation closed", func() bool {
		return queryInt(t, a, `SELECT COUNT(*) FROM summaries`) == senders
	})
}

// A summarization that crashed after its summary reply was recorded
// resumes at the facts: the summary is not asked for again.
func TestSummaryResumesAfterItsReplyIsRecorded(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			p := &summaryProvider{summary: func() (string, error) { return "asked again", nil }, facts: "pets: a dog"}
			n := startSummaryNode(t, baseVars(t, b, ""), p)
			tn := say(t, n, "cy", "hello", "20s")
			conv := contextOf(t, n, tn.TurnID).ConversationID
			waitFor(t, "the conversation in the read model", func() bool {
				return queryInt(t, n, `SELECT COUNT(*) FROM conversations WHERE id = $1 AND messages = 2`, conv) == 1
			})
			// What a process recorded before it died.
			evs, err := domain.NewEvents(domain.Metadata{CorrelationID: conv},
				summary.SummaryRequested{ConversationID: conv, Channel: "http", SenderID: "cy", Messages: 2, Reason: "idle"},
				summary.SummaryWritten{Text: "the recorded summary"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := n.rt.Store.Append(context.Background(), summary.SummaryStream(conv), 0, evs...); err != nil {
				t.Fatal(err)
			}
			c := projections.OpenConversation{ID: conv, Channel: "http", SenderID: "cy"}
			if err := n.rt.Summarizer.Summarize(context.Background(), c, "idle"); err != nil {
				t.Fatal(err)
			}
			if s, f := p.counts(); s != 0 || f != 1 {
				t.Fatalf("resumed with %d summary and %d fact calls, want 0 and 1", s, f)
			}
			closed := decodeLast[turn.ConversationClosed](t, streamEvents(t, n, summary.SummaryStream(conv)), "ConversationClosed")
			if closed.Summary != "the recorded summary" {
				t.Fatalf("closed with %q", closed.Summary)
			}
		})
	}
}
