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
	"github.com/omega-gateway/omega/domain/markers"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/domain/usage"
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
	reported := turn.ProviderReplied{Provider: "claude-code", Model: "sonnet", Text: "Sure, \"done\"\nline two", DurationMs: 1200,
		InputTokens: 120, OutputTokens: 30, CacheReadTokens: 20, CostUSD: 0.01, UsageReported: true, PromptBytes: 400, ReplyBytes: 22}
	return []Turn{
		{ID: id(), Channel: "telegram", SenderID: "ana", Text: "hello, \"world\"\nsecond line", Status: "answered", Events: []domain.Payload{
			turn.ContextBuilt{ConversationID: "c1", Project: "garden", Model: "sonnet", SectionsUsed: []string{"identity"}},
			turn.ProviderCalled{Provider: "claude-code", Model: "sonnet", Attempt: 1}, reported,
			turn.MarkersApplied{Markers: []markers.AppliedMarker{{Name: "REMEMBER", Effect: "recorded fact city=Lisbon", Stream: "sender-telegram-ana"}}},
			turn.ReplyReady{Text: "Sure, \"done\"\nline two"}, turn.ReplySent{Kind: "reply", Text: "Sure", Chunks: 1},
			turn.TurnCompleted{Status: "ok"},
		}},
		{ID: id(), Channel: "telegram", SenderID: "ana", Text: "plan the week", Status: "answered", Events: []domain.Payload{
			turn.ContextBuilt{ConversationID: "c1", Project: "garden", Model: "sonnet"},
			turn.RouteDecided{Steps: []string{"a", "b"}, Model: "opus", Raw: "PLAN", Usage: &usage.CallUsage{DurationMs: 100, InputTokens: 10, OutputTokens: 5, UsageReported: true}},
			turn.PlanStepCompleted{Index: 1, Text: "a", Reply: "A", Usage: &usage.CallUsage{DurationMs: 200, InputTokens: 20, OutputTokens: 6, CostUSD: 0.02, UsageReported: true}},
			turn.PlanStepCompleted{Index: 2, Text: "b", Reply: "B", Usage: &usage.CallUsage{DurationMs: 300, InputTokens: 30, OutputTokens: 7, CostUSD: 0.03, UsageReported: true}},
			turn.ReplyReady{Text: "week planned"}, turn.TurnCompleted{Status: "ok"},
		}},
		{ID: id(), Channel: "whatsapp", SenderID: "stranger", Text: "let me in", Status: "denied", Events: []domain.Payload{
			turn.AccessDenied{Reason: "not allowed"}, turn.TurnCompleted{Status: "denied"},
		}},
		{ID: id(), Channel: "http", SenderID: "owner", Text: "/status", Status: "answered", Events: []domain.Payload{
			turn.CommandAnswered{Command: "status", Reply: "all good"}, turn.TurnCompleted{Status: "command"},
		}},
		{ID: id(), Channel: "http", SenderID: "owner", Text: "break please", Status: "failed", Events: []domain.Payload{
			turn.ContextBuilt{ConversationID: "c2", Model: "haiku"},
			turn.ProviderCalled{Provider: "openai", Model: "haiku", Attempt: 1},
			turn.ProviderFailed{Provider: "openai", Class: "unavailable", Message: "down", DurationMs: 50},
			turn.TurnCompleted{Status: "error"},
		}},
		{ID: id(), Channel: "telegram", SenderID: "group", Text: "chatter", Status: "suppressed", Events: []domain.Payload{
			turn.ContextBuilt{ConversationID: "c3", Model: "sonnet"},
			turn.ProviderReplied{Provider: "openai", Model: "sonnet", Text: "SILENT", DurationMs: 10, PromptBytes: 5, ReplyBytes: 6},
			turn.TurnSuppressed{Reason: "SILENT"}, turn.TurnCompleted{Status: "suppressed"},
		}},
		{ID: id(), Channel: "telegram", SenderID: "ana", Text: "while busy", Status: "acknowledged", Events: []domain.Payload{
			turn.AckSent{Text: "one moment"}, turn.ContextBuilt{ConversationID: "c1", Project: "garden", Model: "sonnet"},
			turn.ProviderReplied{Provider: "openai", Model: "sonnet", Text: "later", DurationMs: 10, PromptBytes: 5, ReplyBytes: 5},
			turn.ReplyReady{Text: "later"}, turn.TurnCompleted{Status: "ok"},
		}},
	}
}

func id() string { return uuid.NewString() }

// Append records turn on its stream: the message, then its events.
func Append(t testing.TB, s eventstore.Store, tn Turn) {
	t.Helper()
	md := domain.Metadata{CorrelationID: tn.ID, Channel: tn.Channel, Sender: tn.SenderID}
	ps := append([]domain.Payload{turn.MessageReceived{Channel: tn.Channel, SenderID: tn.SenderID, ChatID: tn.SenderID, Text: tn.Text}}, tn.Events...)
	evs, err := domain.NewEvents(md, ps...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(context.Background(), domain.TurnStream(tn.ID), eventstore.NoStream, evs...); err != nil {
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
