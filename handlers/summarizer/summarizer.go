// Package summarizer closes idle conversations: it summarizes each with
// the fast model, extracts the facts it taught about the user, clears the
// provider session and records the closure. Each summarization is a
// stream (summary.SummaryStream) driven step by step like a turn — claim,
// summary, facts, closure — so a crash resumes where it stopped, a reply
// on record is never asked for again, and several processes on one
// database summarize each conversation once.
package summarizer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/summary"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/domain/usage"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/projections"
	"github.com/omega-gateway/omega/providers"
)

// Provider is the model the summaries are asked of.
type Provider interface {
	Complete(ctx context.Context, req providers.Request) (providers.Response, error)
}

// ReadModel is what the summarizer reads of the conversations.
type ReadModel interface {
	OpenConversations(ctx context.Context, lastBefore time.Time) ([]projections.OpenConversation, error)
	OldestOpenConversation(ctx context.Context) (time.Time, bool, error)
	History(ctx context.Context, conversationID string, limit int) ([]turn.HistoryMessage, error)
	LatestConversation(ctx context.Context, snd, project, id string) (bool, error)
}

// Senders records facts and clears sessions on a sender's profile.
type Senders interface {
	Decide(ctx context.Context, channel, senderID string, md domain.Metadata, decide func(sender.SenderProfile) ([]domain.Payload, error)) (sender.SenderProfile, error)
}

// Leases gives one process at a time a conversation to summarize.
type Leases interface {
	Acquire(ctx context.Context, key string) (bool, error)
	Release(ctx context.Context, key string) error
	// Renew keeps the lease until ctx ends (true) or it is lost (false).
	Renew(ctx context.Context, key string, failed func(error)) bool
}

// Prompts are the SUMMARIZE and FACTS prompts.
type Prompts interface {
	Summarize() string
	Facts() string
}

// Deps are the summarizer's collaborators; all are required.
type Deps struct {
	Store    eventstore.Store
	Registry *domain.Registry
	Read     ReadModel
	Senders  Senders
	Provider Provider
	Leases   Leases
	Prompts  Prompts
	Logger   *slog.Logger
}

// Config tunes the summarizer.
type Config struct {
	// Idle is how long a conversation rests before it is summarized
	// (OMEGA_CONVERSATION_IDLE; the driver starts a new one after it too).
	Idle time.Duration
	// LeaseTTL is how long a claim outlives a process that died.
	LeaseTTL time.Duration
	Model    string // the fast model
	WorkDir  string
	// Now replaces the clock in tests.
	Now func() time.Time
}

// Summarizer summarizes and closes conversations.
type Summarizer struct {
	Deps
	cfg Config
	bg  jobs
}

// jobs are the summaries running in the background (see CommandHandler).
type jobs struct {
	ctx     context.Context
	cancel  context.CancelFunc
	mu      sync.Mutex
	running map[string]bool
	wg      sync.WaitGroup
}

// maxTranscript bounds how many messages a summary reads.
const maxTranscript = 500

// New validates the dependencies and returns a summarizer.
func New(d Deps, cfg Config) (*Summarizer, error) {
	switch {
	case d.Store == nil, d.Registry == nil, d.Read == nil, d.Senders == nil, d.Provider == nil,
		d.Leases == nil, d.Prompts == nil, d.Logger == nil:
		return nil, errors.New("summarizer: every dependency is required")
	case cfg.Idle <= 0:
		return nil, fmt.Errorf("summarizer: idle time must be positive (got %s)", cfg.Idle)
	case cfg.LeaseTTL <= 0:
		return nil, fmt.Errorf("summarizer: lease TTL must be positive (got %s)", cfg.LeaseTTL)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Summarizer{Deps: d, cfg: cfg}
	s.bg.ctx, s.bg.cancel = context.WithCancel(context.Background())
	s.bg.running = map[string]bool{}
	return s, nil
}

// Summarize drives one conversation's summarization to its closure. It
// returns nil without doing anything when another process holds the
// conversation; that process finishes it, or it is resumed after its
// lease expires.
func (s *Summarizer) Summarize(ctx context.Context, c projections.OpenConversation, reason string) error {
	key := summary.SummaryStream(c.ID)
	ok, err := s.Leases.Acquire(ctx, key)
	if err != nil || !ok {
		return err
	}
	stop := s.renew(ctx, key)
	defer func() {
		stop()
		if err := s.Leases.Release(context.WithoutCancel(ctx), key); err != nil {
			s.Logger.Warn("summarizer: release lease", "conversation", c.ID, "err", err)
		}
	}()
	log := s.Logger.With("conversation", c.ID, "sender", sender.SenderKey(c.Channel, c.SenderID))
	// The process that held the lease until a moment ago may have written
	// a step this process's copy of the stream does not show yet: the
	// first fold reads the database, so the step is not asked of the model
	// twice.
	stepCtx := eventstore.FreshReads(ctx)
	for {
		done, err := s.step(stepCtx, c, reason, log)
		stepCtx = ctx
		if errors.Is(err, eventstore.ErrConcurrency) {
			continue // someone else moved the stream on; look again
		}
		if err != nil || done {
			return err
		}
	}
}

// renew keeps the lease while a provider call may outlast its TTL. A lost
// lease only logs: every append stays guarded by the stream's version.
func (s *Summarizer) renew(ctx context.Context, key string) func() {
	ctx, cancel := context.WithCancel(ctx)
	warn := func(err error) { s.Logger.Warn("summarizer: renew lease", "key", key, "err", err) }
	go func() {
		if !s.Leases.Renew(ctx, key, warn) {
			warn(errors.New("lease lost to another process"))
		}
	}()
	return cancel
}

// step performs the single next step of a summarization and records it.
func (s *Summarizer) step(ctx context.Context, c projections.OpenConversation, reason string, log *slog.Logger) (bool, error) {
	stream := summary.SummaryStream(c.ID)
	var st summary.Summarization
	version, err := eventstore.Fold(ctx, s.Store, s.Registry, stream, folder{&st})
	if err != nil {
		return false, err
	}
	switch st.Next() {
	case summary.SummaryStepDone:
		return true, nil
	case summary.SummaryStepClaim:
		msgs, err := s.Read.History(ctx, c.ID, maxTranscript)
		if err != nil {
			return false, err
		}
		return false, s.append(ctx, stream, version, c, summary.SummaryRequested{ConversationID: c.ID, Channel: c.Channel,
			SenderID: c.SenderID, Project: c.Project, Messages: len(msgs), Reason: reason})
	case summary.SummaryStepSummarize:
		written, err := s.summarize(ctx, c, st.Requested.Messages)
		if err != nil {
			return false, err
		}
		if written.Fallback {
			log.Warn("conversation summary failed; closing with the fallback", "err", written.Error)
		}
		return false, s.append(ctx, stream, version, c, written)
	case summary.SummaryStepFacts:
		if (sender.SenderRef{Channel: c.Channel, ID: c.SenderID}).IsGroup() {
			// A group's transcript mixes its members: no fact in it is
			// about the one user a profile belongs to.
			log.Info("group conversation: no facts extracted")
			return false, s.append(ctx, stream, version, c, summary.FactsExtracted{})
		}
		facts, err := s.facts(ctx, c)
		if err != nil {
			return false, err
		}
		if facts.Error != "" {
			log.Warn("fact extraction failed; closing without new facts", "err", facts.Error)
		}
		return false, s.append(ctx, stream, version, c, facts)
	}
	return s.close(ctx, stream, version, c, &st, log)
}

// summarize asks for the summary. A failed call becomes the fallback
// text, but a call cut short by shutdown records nothing: it is asked
// again at the next start.
func (s *Summarizer) summarize(ctx context.Context, c projections.OpenConversation, messages int) (summary.SummaryWritten, error) {
	text, use, err := s.ask(ctx, c, s.Prompts.Summarize(), usage.PurposeSummary)
	if ctx.Err() != nil {
		return summary.SummaryWritten{}, ctx.Err()
	}
	if err != nil || strings.TrimSpace(text) == "" {
		msg := "empty reply"
		if err != nil {
			msg = err.Error()
		}
		return summary.SummaryWritten{Text: summary.FallbackSummary(messages), Fallback: true, Error: msg, Usage: use}, nil
	}
	return summary.SummaryWritten{Text: strings.TrimSpace(text), Usage: use}, nil
}

func (s *Summarizer) facts(ctx context.Context, c projections.OpenConversation) (summary.FactsExtracted, error) {
	raw, use, err := s.ask(ctx, c, s.Prompts.Facts(), usage.PurposeFacts)
	if ctx.Err() != nil {
		return summary.FactsExtracted{}, ctx.Err()
	}
	if err != nil {
		return summary.FactsExtracted{Error: err.Error(), Usage: use}, nil //nolint:nilerr // a failed call is recorded in the event, not retried
	}
	out := summary.ExtractFacts(raw)
	out.Usage = use
	return out, nil
}

// ask sends prompt followed by the transcript to the fast model and
// returns the reply and the call's usage (nil when no call was made).
func (s *Summarizer) ask(ctx context.Context, c projections.OpenConversation, prompt, purpose string) (string, *usage.CallUsage, error) {
	msgs, err := s.Read.History(ctx, c.ID, maxTranscript)
	if err != nil {
		return "", nil, err
	}
	start := time.Now()
	call := providers.Call{Purpose: purpose, Sender: sender.SenderKey(c.Channel, c.SenderID)}
	resp, err := s.Provider.Complete(providers.WithCall(ctx, call), providers.Request{
		Prompt: prompt + "\n\n" + summary.Transcript(msgs), Model: s.cfg.Model, WorkDir: s.cfg.WorkDir,
	})
	use := resp.CallUsageOf(time.Since(start), err)
	if err != nil {
		return "", use, err
	}
	return resp.Text, use, nil
}

// close records the accepted facts and clears the provider session on the
// sender's profile (one append), then the closure. A resumed close records
// no fact twice: the profile already holds the same value. The session is
// left alone when the sender has already started a newer conversation: it
// belongs to that one.
func (s *Summarizer) close(ctx context.Context, stream string, version int64, c projections.OpenConversation, st *summary.Summarization, log *slog.Logger) (bool, error) {
	req := st.Requested
	snd := sender.SenderKey(req.Channel, req.SenderID)
	latest, err := s.Read.LatestConversation(ctx, snd, req.Project, req.ConversationID)
	if err != nil {
		return false, err
	}
	md := s.meta(c)
	md.CausationID = stream
	if _, err := s.Senders.Decide(ctx, req.Channel, req.SenderID, md, func(p sender.SenderProfile) ([]domain.Payload, error) {
		var out []domain.Payload
		if st.Facts != nil {
			for _, f := range st.Facts.Accepted {
				evs, err := p.RecordFact(f.Key, f.Value, "summarizer")
				if err != nil {
					log.Warn("summarizer: fact refused by the profile", "key", f.Key, "err", err)
					continue
				}
				out = append(out, evs...)
			}
		}
		if latest {
			out = append(out, p.ClearSession(req.Project, "summarized")...)
		}
		return out, nil
	}); err != nil {
		return false, err
	}
	closed := turn.ConversationClosed{ConversationID: req.ConversationID, Sender: snd, Project: req.Project,
		Summary: st.Summary(), Reason: req.Reason, Messages: req.Messages}
	if err := s.append(ctx, stream, version, c, closed); err != nil {
		return false, err
	}
	log.Info("conversation summarized and closed", "reason", req.Reason, "messages", req.Messages,
		"facts", len(st.FactsAccepted()), "summary_chars", len(closed.Summary))
	return true, nil
}

func (s *Summarizer) meta(c projections.OpenConversation) domain.Metadata {
	return domain.Metadata{CorrelationID: c.ID, CausationID: c.ID, Channel: c.Channel, Sender: c.SenderID}
}

// append records one event at the version the step was decided on.
func (s *Summarizer) append(ctx context.Context, stream string, version int64, c projections.OpenConversation, p domain.Payload) error {
	e, err := domain.NewEventFrom(p, s.meta(c))
	if err != nil {
		return err
	}
	if _, err := s.Store.Append(ctx, stream, eventstore.Exact(version), e); err != nil {
		return fmt.Errorf("record %s on %s: %w", p.EventType(), stream, err)
	}
	return nil
}

// folder adapts the summarization state to eventstore.Aggregate.
type folder struct{ *summary.Summarization }

func (f folder) Apply(p domain.Payload, _ int64, _ time.Time) { f.Summarization.Apply(p) }
