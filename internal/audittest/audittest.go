// Package audittest records turns of every kind, as the driver would, for
// tests of the audit read model and the tools that query it.
package audittest

import (
	"context"
	"database/sql"
	"log/slog"
	"testing"

	"github.com/google/uuid"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/projections/engine"
	"github.com/omega-gateway/omega/projections/readmodel"
)

// Turn is one seeded turn.
type Turn struct {
	ID       string
	Channel  string
	SenderID string
	Text     string
	Status   string // what Seed's audit should show: answered, denied, ...
	Events   []domain.Payload
}

// Turns returns one turn of each kind the audit distinguishes. The
// answered turn's texts hold commas, quotes and newlines.
func Turns() []Turn {
	reported := domain.ProviderReplied{Provider: "claude-code", Model: "sonnet", Text: "Sure, \"done\"\nline two", DurationMs: 1200,
		InputTokens: 120, OutputTokens: 30, CacheReadTokens: 20, CostUSD: 0.01, UsageReported: true, PromptBytes: 400, ReplyBytes: 22}
	return []Turn{
		{ID: id(), Channel: "telegram", SenderID: "ana", Text: "hello, \"world\"\nsecond line", Status: "answered", Events: []domain.Payload{
			domain.ContextBuilt{ConversationID: "c1", Project: "garden", Model: "sonnet", SectionsUsed: []string{"identity"}},
			domain.ProviderCalled{Provider: "claude-code", Model: "sonnet", Attempt: 1}, reported,
			domain.MarkersApplied{Markers: []domain.AppliedMarker{{Name: "REMEMBER", Effect: "recorded fact city=Lisbon", Stream: "sender-telegram-ana"}}},
			domain.ReplyReady{Text: "Sure, \"done\"\nline two"}, domain.ReplySent{Kind: "reply", Text: "Sure", Chunks: 1},
			domain.TurnCompleted{Status: "ok"},
		}},
		{ID: id(), Channel: "telegram", SenderID: "ana", Text: "plan the week", Status: "answered", Events: []domain.Payload{
			domain.ContextBuilt{ConversationID: "c1", Project: "garden", Model: "sonnet"},
			domain.RouteDecided{Steps: []string{"a", "b"}, Model: "opus", Raw: "PLAN", Usage: &domain.CallUsage{DurationMs: 100, InputTokens: 10, OutputTokens: 5, UsageReported: true}},
			domain.PlanStepCompleted{Index: 1, Text: "a", Reply: "A", Usage: &domain.CallUsage{DurationMs: 200, InputTokens: 20, OutputTokens: 6, CostUSD: 0.02, UsageReported: true}},
			domain.PlanStepCompleted{Index: 2, Text: "b", Reply: "B", Usage: &domain.CallUsage{DurationMs: 300, InputTokens: 30, OutputTokens: 7, CostUSD: 0.03, UsageReported: true}},
			domain.ReplyReady{Text: "week planned"}, domain.TurnCompleted{Status: "ok"},
		}},
		{ID: id(), Channel: "whatsapp", SenderID: "stranger", Text: "let me in", Status: "denied", Events: []domain.Payload{
			domain.AccessDenied{Reason: "not allowed"}, domain.TurnCompleted{Status: "denied"},
		}},
		{ID: id(), Channel: "http", SenderID: "owner", Text: "/status", Status: "answered", Events: []domain.Payload{
			domain.CommandAnswered{Command: "status", Reply: "all good"}, domain.TurnCompleted{Status: "command"},
		}},
		{ID: id(), Channel: "http", SenderID: "owner", Text: "break please", Status: "failed", Events: []domain.Payload{
			domain.ContextBuilt{ConversationID: "c2", Model: "haiku"},
			domain.ProviderCalled{Provider: "openai", Model: "haiku", Attempt: 1},
			domain.ProviderFailed{Provider: "openai", Class: "unavailable", Message: "down", DurationMs: 50},
			domain.TurnCompleted{Status: "error"},
		}},
		{ID: id(), Channel: "telegram", SenderID: "group", Text: "chatter", Status: "suppressed", Events: []domain.Payload{
			domain.ContextBuilt{ConversationID: "c3", Model: "sonnet"},
			domain.ProviderReplied{Provider: "openai", Model: "sonnet", Text: "SILENT", DurationMs: 10, PromptBytes: 5, ReplyBytes: 6},
			domain.TurnSuppressed{Reason: "SILENT"}, domain.TurnCompleted{Status: "suppressed"},
		}},
		{ID: id(), Channel: "telegram", SenderID: "ana", Text: "while busy", Status: "acknowledged", Events: []domain.Payload{
			domain.AckSent{Text: "one moment"}, domain.ContextBuilt{ConversationID: "c1", Project: "garden", Model: "sonnet"},
			domain.ProviderReplied{Provider: "openai", Model: "sonnet", Text: "later", DurationMs: 10, PromptBytes: 5, ReplyBytes: 5},
			domain.ReplyReady{Text: "later"}, domain.TurnCompleted{Status: "ok"},
		}},
	}
}

func id() string { return uuid.NewString() }

// Append records turn on its stream: the message, then its events.
func Append(t testing.TB, s eventstore.Store, turn Turn) {
	t.Helper()
	md := domain.Metadata{CorrelationID: turn.ID, Channel: turn.Channel, Sender: turn.SenderID}
	ps := append([]domain.Payload{domain.MessageReceived{Channel: turn.Channel, SenderID: turn.SenderID, ChatID: turn.SenderID, Text: turn.Text}}, turn.Events...)
	evs, err := domain.NewEvents(md, ps...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(context.Background(), domain.TurnStream(turn.ID), eventstore.NoStream, evs...); err != nil {
		t.Fatal(err)
	}
}

// Store is a store whose database holds the read models.
type Store interface {
	engine.Log
	DB() *sql.DB
}

// Project sets up the projections ps over s and applies the whole log.
func Project(t testing.TB, s Store, d readmodel.Dialect, reg *domain.Registry, ps ...readmodel.Projection) *engine.Engine {
	t.Helper()
	eng := engine.New(s.DB(), s, d, reg, slog.New(slog.DiscardHandler), ps...)
	if err := eng.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := eng.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	return eng
}
