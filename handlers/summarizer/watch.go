package summarizer

import (
	"context"
	"time"

	"github.com/ThreeDotsLabs/watermill/components/cqrs"
	"golang.org/x/sync/errgroup"

	"github.com/omega-gateway/omega/projections"
)

// SummarizeConversation is the command that summarizes and closes one
// conversation. It travels on the CQRS command bus, so the work runs
// behind the router's recoverer, retry and poison queue.
type SummarizeConversation struct {
	ConversationID string
	Channel        string
	SenderID       string
	Project        string
	Reason         string
}

func (SummarizeConversation) CommandName() string { return "SummarizeConversation" }

func (c SummarizeConversation) conversation() projections.OpenConversation {
	return projections.OpenConversation{ID: c.ConversationID, Channel: c.Channel, SenderID: c.SenderID, Project: c.Project}
}

// CommandHandler exposes Summarize to the command bus. The summary runs
// after the command is acknowledged, not inside its handler: on
// PostgreSQL the command's delivery transaction holds a row lock, and so
// a transaction id, until the handler returns, and an open transaction id
// holds back every reader of the event log, which would stall all turns
// for the length of the summary's provider calls. Nothing is lost by
// acknowledging first: until the summary is recorded the conversation
// stays open, and Watch sends the command again.
func (s *Summarizer) CommandHandler() cqrs.CommandHandler {
	return cqrs.NewCommandHandler("SummarizeConversation", func(_ context.Context, c *SummarizeConversation) error {
		s.background(c.conversation(), c.Reason)
		return nil
	})
}

// background runs one conversation's summary in its own goroutine unless
// it is running already in this process.
func (s *Summarizer) background(c projections.OpenConversation, reason string) {
	s.bg.mu.Lock()
	defer s.bg.mu.Unlock()
	if s.bg.ctx.Err() != nil || s.bg.running[c.ID] {
		return
	}
	s.bg.running[c.ID] = true
	s.bg.wg.Add(1)
	go func() {
		defer s.bg.wg.Done()
		defer func() {
			s.bg.mu.Lock()
			delete(s.bg.running, c.ID)
			s.bg.mu.Unlock()
		}()
		if err := s.Summarize(s.bg.ctx, c, reason); err != nil && s.bg.ctx.Err() == nil {
			s.Logger.Warn("summarizer: conversation not summarized; it stays open and is tried again", "conversation", c.ID, "err", err)
		}
	}()
}

// Stop cancels the summaries running in the background and waits for
// them; their conversations stay open and are summarized later (or by
// SummarizeOpen at shutdown).
func (s *Summarizer) Stop() {
	s.bg.cancel()
	s.bg.wg.Wait()
}

// CommandSender is the command bus, as the watcher needs it.
type CommandSender interface {
	Send(ctx context.Context, cmd any) error
}

const (
	// recheck is how soon the watcher looks again while a conversation it
	// sent is not shown closed yet (the read model follows the log).
	recheck = time.Second
	// shutdownWorkers bounds concurrent summaries at shutdown.
	shutdownWorkers = 4
)

// anyTime is later than any conversation's last activity, whatever the
// clocks of the processes that recorded it.
var anyTime = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)

// Watch sends SummarizeConversation for every conversation idle for the
// configured time. It sleeps until the least recently active open
// conversation falls idle, not on a fixed poll: a conversation that starts
// later cannot fall idle sooner than one idle period from now, so with
// nothing open it wakes once per idle period.
func (s *Summarizer) Watch(ctx context.Context, bus CommandSender) error {
	sent := map[string]time.Time{}
	for {
		wait := s.dispatch(ctx, bus, sent)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// dispatch sends the idle conversations not already sent and returns how
// long to sleep.
func (s *Summarizer) dispatch(ctx context.Context, bus CommandSender, sent map[string]time.Time) time.Duration {
	now := s.cfg.Now()
	idle, err := s.Read.OpenConversations(ctx, now.Add(-s.cfg.Idle))
	if err != nil {
		if ctx.Err() == nil {
			s.Logger.Error("summarizer: read idle conversations", "err", err)
		}
		return recheck
	}
	open := map[string]bool{}
	for _, c := range idle {
		open[c.ID] = true
		// Sent and still open: its summarizer is at work, or died and its
		// lease expires within a TTL, or the retries gave up. Send again
		// after two TTLs.
		if at, ok := sent[c.ID]; ok && now.Sub(at) < 2*s.cfg.LeaseTTL {
			continue
		}
		sent[c.ID] = now
		cmd := &SummarizeConversation{ConversationID: c.ID, Channel: c.Channel, SenderID: c.SenderID, Project: c.Project, Reason: "idle"}
		if err := bus.Send(ctx, cmd); err != nil && ctx.Err() == nil {
			s.Logger.Error("summarizer: send summarize command", "conversation", c.ID, "err", err)
		}
	}
	for id := range sent {
		if !open[id] {
			delete(sent, id)
		}
	}
	if len(sent) > 0 {
		return recheck
	}
	oldest, ok, err := s.Read.OldestOpenConversation(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.Logger.Error("summarizer: read open conversations", "err", err)
		}
		return recheck
	}
	if !ok {
		return s.cfg.Idle
	}
	return min(max(oldest.Add(s.cfg.Idle).Sub(s.cfg.Now()), 10*time.Millisecond), s.cfg.Idle)
}

// SummarizeOpen summarizes every open conversation, idle or not, until
// ctx ends: the shutdown path. It calls Summarize directly rather than
// through the bus because the router is stopping and the bound must
// hold; a conversation it does not finish is still open in the log and is
// summarized after the next start. It returns how many it closed.
func (s *Summarizer) SummarizeOpen(ctx context.Context) (int, int) {
	open, err := s.Read.OpenConversations(ctx, anyTime)
	if err != nil {
		s.Logger.Warn("shutdown: read open conversations", "err", err)
		return 0, 0
	}
	g := errgroup.Group{}
	g.SetLimit(shutdownWorkers)
	done := make(chan bool, len(open))
	for _, c := range open {
		g.Go(func() error {
			err := s.Summarize(ctx, c, "shutdown")
			if err != nil {
				s.Logger.Warn("shutdown: conversation not summarized; it will be after the next start", "conversation", c.ID, "err", err)
			}
			done <- err == nil
			return nil
		})
	}
	_ = g.Wait()
	close(done)
	n := 0
	for ok := range done {
		if ok {
			n++
		}
	}
	return n, len(open)
}
