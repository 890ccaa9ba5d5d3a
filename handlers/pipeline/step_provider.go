package pipeline

import (
	"cmp"
	"context"
	"log/slog"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/domain/usage"
	"github.com/omega-gateway/omega/internal/wait"
	"github.com/omega-gateway/omega/providers"
)

// providerRequest is the call a turn's context asks for: the prompt on
// the resumed session, or the whole context.
func (d *Driver) providerRequest(c *turn.ContextBuilt, resume bool) providers.Request {
	req := providers.Request{Model: c.Model, WorkDir: d.Config.Workspace}
	if resume {
		req.SessionID, req.Prompt = c.SessionID, c.Prompt
		return req
	}
	req.System, req.Prompt = c.System, c.Message
	for _, h := range c.History {
		req.History = append(req.History, providers.Message{Role: h.Role, Content: h.Text})
	}
	return req
}

// providerFailed records a failed call. A resumed session that failed may
// be gone or broken: it is forgotten and the call tried once more with the
// whole context.
func (d *Driver) providerFailed(ctx context.Context, st *turnState, err error, resume bool, elapsed time.Duration, statusCount int, log *slog.Logger) error {
	class := providers.ClassOf(err)
	failed := turn.ProviderFailed{Provider: d.providerName(), Class: class.String(), Message: d.Config.Redactor.Error(err), DurationMs: elapsed.Milliseconds(), StatusMessages: statusCount}
	if failed.ResetAt = providers.RefusedUntil(err); failed.ResetAt != nil {
		// No call was made: the limit, not the session, stopped it.
		failed.DurationMs = 0
		log.Warn("provider call refused by a spending limit", "reset_at", *failed.ResetAt)
		return d.recordOutcome(ctx, st, failed)
	}
	if resume && class != providers.Unavailable {
		failed.RetryFullContext = true
		if err := d.durably(ctx, st.ID, "session cleared", func(bool) error {
			return d.clearSession(ctx, st, st.Context.Project, "resume failed: "+class.String())
		}); err != nil {
			return err
		}
	}
	log.Warn("provider call failed", "class", class, "err", err, "retry_full_context", failed.RetryFullContext)
	return d.recordOutcome(ctx, st, failed)
}

// startSession records the provider's session on the chat's profile (the
// sender's, or the group's), so that the chat's next turn resumes it;
// nothing when the provider keeps none.
func (d *Driver) startSession(ctx context.Context, st *turnState, sessionID string) error {
	if sessionID == "" {
		return nil
	}
	st.senderWritten = true
	m, project, chat := st.Received, st.Context.Project, st.Received.Chat()
	md := domain.Metadata{CorrelationID: st.ID, Channel: m.Channel, Sender: m.SenderID, Project: project}
	return d.durably(ctx, st.ID, "session started", func(bool) error {
		_, err := d.Senders.Decide(ctx, chat.Channel, chat.ID, md, func(p sender.SenderProfile) ([]domain.Payload, error) {
			return p.StartSession(project, sessionID, d.providerName()), nil
		})
		return err
	})
}

func (d *Driver) callProvider(ctx context.Context, st *turnState, profile sender.SenderProfile, log *slog.Logger) error {
	c := st.Context
	if st.ActionRetry() && !st.Failure.RetryFullContext {
		// A failed scheduled action waits before its next attempt.
		if err := wait.Sleep(ctx, cmp.Or(d.Config.ActionBackoff, 2*time.Second)<<(2*(st.Calls-1))); err != nil {
			return err
		}
	}
	if d.Config.ProviderProblem != nil {
		return d.record(ctx, st, turn.ProviderFailed{Provider: d.providerName(), Class: providers.Unavailable.String(), Message: d.Config.Redactor.Error(d.Config.ProviderProblem)})
	}
	resume := c.SessionID != "" && st.Failure == nil
	req := d.providerRequest(c, resume)
	var err error
	if req.MCPServers, err = d.mcpServers(ctx, c.Skills); err != nil {
		return err
	}
	called := turn.ProviderCalled{Provider: d.providerName(), Model: c.Model, SessionID: req.SessionID, Attempt: st.Calls + 1, FullContext: !resume && c.SessionID != ""}
	if err := d.record(ctx, st, called); err != nil {
		return err
	}

	stopTyping := d.typing(ctx, st, log)
	start := d.now()
	resp, statusCount, err := d.ask(forCall(ctx, st, usage.PurposeTurn), st, req, profile, log)
	stopTyping()
	elapsed := d.now().Sub(start)
	if ctx.Err() != nil {
		// Shutting down: leave the turn as it is; it resumes at this call.
		return ctx.Err()
	}
	if err != nil {
		return d.providerFailed(ctx, st, err, resume, elapsed, statusCount, log)
	}
	replied := turn.ProviderReplied{
		Provider: d.providerName(), Model: firstNonEmpty(resp.Model, c.Model), Text: resp.Text, SessionID: resp.SessionID,
		DurationMs: elapsed.Milliseconds(), InputTokens: resp.InputTokens, OutputTokens: resp.OutputTokens,
		NumTurns: resp.NumTurns, Resumes: resp.Resumes, PromptBytes: len(req.System) + len(req.Prompt), ReplyBytes: len(resp.Text),
		StatusMessages: statusCount, CacheReadTokens: resp.CacheReadTokens, CacheWriteTokens: resp.CacheWriteTokens,
		CostUSD: resp.CostUSD, UsageReported: resp.UsageReported,
	}
	if err := d.startSession(ctx, st, resp.SessionID); err != nil {
		return err
	}
	st.addOutcome(replied)
	if d.Replies != nil {
		// The reply is paid for, and its markers act on other streams: it
		// is on record before anything uses it, so a process that dies
		// later never calls the provider again for it. (Recording it with
		// the completion would save one append per turn and re-buy the
		// reply after a crash between the send and the record.)
		return d.flush(ctx, st)
	}
	return nil
}

// clearSession forgets the chat's provider session in project.
func (d *Driver) clearSession(ctx context.Context, st *turnState, project, reason string) error {
	st.senderWritten = true
	m, chat := st.Received, st.Received.Chat()
	md := domain.Metadata{CorrelationID: st.ID, Channel: m.Channel, Sender: m.SenderID, Project: project}
	_, err := d.Senders.Decide(ctx, chat.Channel, chat.ID, md, func(p sender.SenderProfile) ([]domain.Payload, error) {
		return p.ClearSession(project, reason), nil
	})
	return err
}

func (d *Driver) providerName() string {
	if d.Provider == nil {
		return "none"
	}
	return d.Provider.Name()
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
