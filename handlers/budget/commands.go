package budget

import (
	"context"
	"errors"
	"fmt"

	"github.com/ThreeDotsLabs/watermill/components/cqrs"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/budget"
	"github.com/omega-gateway/omega/eventstore"
)

// SetBudget sets one sender's limits (`omega budget set`): a nil limit
// stays as it was, a zero amount removes it.
type SetBudget struct {
	Channel, SenderID string
	Daily, Monthly    *budget.Amount
	Meta              domain.Metadata
}

// CommandName names the command on the bus.
func (SetBudget) CommandName() string { return "SetBudget" }

// Commands handles the budget's commands.
type Commands struct {
	store    eventstore.Store
	registry *domain.Registry
}

// NewCommands returns the command handlers on store.
func NewCommands(store eventstore.Store, reg *domain.Registry) (Commands, error) {
	if store == nil || reg == nil {
		return Commands{}, errors.New("budget: commands need a store and a registry")
	}
	return Commands{store: store, registry: reg}, nil
}

// SetBudget records BudgetSet unless the sender's limits are already so.
func (c Commands) SetBudget(ctx context.Context, cmd *SetBudget) error {
	if cmd.Channel == "" || cmd.SenderID == "" {
		return errors.New("budget: a sender's limits need its channel and id")
	}
	set := budget.BudgetSet{Channel: cmd.Channel, SenderID: cmd.SenderID}
	_, _, err := eventstore.Update(ctx, c.store, c.registry, budget.LimitsStream, cmd.Meta,
		func() *budget.SenderLimits { return &budget.SenderLimits{} },
		func(l *budget.SenderLimits) ([]domain.Payload, error) {
			was := l.Of[set.Key()]
			set.Limits = was
			if cmd.Daily != nil {
				set.Daily = *cmd.Daily
			}
			if cmd.Monthly != nil {
				set.Monthly = *cmd.Monthly
			}
			if set.Limits == was {
				return nil, nil
			}
			return []domain.Payload{set}, nil
		})
	if err != nil {
		return fmt.Errorf("budget: set the limits of %s: %w", set.Key(), err)
	}
	return nil
}

// CommandHandlers exposes the budget's commands to the command bus.
func (c Commands) CommandHandlers() []cqrs.CommandHandler {
	return []cqrs.CommandHandler{cqrs.NewCommandHandler("SetBudget", c.SetBudget)}
}
