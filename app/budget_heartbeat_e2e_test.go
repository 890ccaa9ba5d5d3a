package app_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/budget"
	heartbeatdom "github.com/omega-gateway/omega/domain/heartbeat"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
)

// Over the Telegram double with a heartbeat every second: at 91 % of the
// daily limit the check-ins make no call and are recorded as refused
// (background work stops at 90 %), the owner is told the limit passed
// 80 %, and a person writing is still answered.
func TestHeartbeatStopsAtNinetyPercent(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			bin, promptLog := heartbeatClaude(t)
			api := telegramtest.New(t, tgToken)
			vars := telegramVars(baseVars(t, b, bin), api, "42")
			vars["OMEGA_HEARTBEAT_INTERVAL"] = "1s"
			vars["OMEGA_TIMEZONE"] = "UTC"
			vars["OMEGA_BUDGET_DAILY"] = "100tok"
			n := startTelegramNode(t, vars)
			// 91 tokens spent today by someone else.
			e, err := domain.NewEventFrom(turn.ProviderReplied{Provider: "claude-code", Text: "x", InputTokens: 91, UsageReported: true},
				domain.Metadata{Channel: "telegram", Sender: "7"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := n.rt.Store.Append(context.Background(), domain.TurnStream("spent-before"), eventstore.NoStream, e); err != nil {
				t.Fatal(err)
			}
			setChecklist(t, n, heartbeatdom.GlobalHeartbeat, heartbeatdom.HeartbeatItemAdded{Item: "NEEDSUSER remind me to stretch"})
			waitFor(t, "two refused check-ins", func() bool {
				refused := 0
				evs, err := n.rt.Store.Load(context.Background(), budget.ExceededStream, 1)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range evs {
					if p, err := n.rt.Registry.Decode(e); err == nil {
						if x, ok := p.(budget.BudgetExceeded); ok && x.Purpose == "heartbeat" && x.Background {
							refused++
						}
					}
				}
				return refused >= 2
			})
			if ps := promptsOf(t, promptLog); len(ps) != 0 {
				t.Fatalf("the heartbeat called the provider at 91 %%: %q", ps)
			}
			waitFor(t, "the owner's alert", func() bool {
				for _, m := range heartbeatMessages(api) {
					if strings.Contains(m, "Spending at 80% of the day limit for everything (100tok)") {
						return true
					}
				}
				return false
			})

			api.PushText(42, 42, "hello there")
			waitFor(t, "the person's reply", func() bool { return len(promptsOf(t, promptLog)) == 1 })
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			sent, err := api.WaitSent(ctx, 2)
			if err != nil {
				t.Fatalf("replies %v: %v", heartbeatMessages(api), err)
			}
			if last := sent[len(sent)-1].Text; strings.Contains(last, "spending limit") {
				t.Fatalf("the person was refused at 91 %%: %q", last)
			}
		})
	}
}
