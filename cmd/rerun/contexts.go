package rerun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/handlers/promptstore"
)

// contextType is the event whose texts may be recorded by reference.
var contextType = turn.ContextBuilt{}.EventType()

// withTexts returns evs with each ContextBuilt's data replaced by its
// texts in full (resolved from src), so that a context recorded by
// reference compares with one recorded in full by what the provider was
// given, whichever schema recorded it.
func withTexts(ctx context.Context, src promptstore.Loader, reg promptstore.Decoder, evs []domain.Event) ([]domain.Event, error) {
	out := make([]domain.Event, len(evs))
	for i, e := range evs {
		out[i] = e
		if e.Type != contextType {
			continue
		}
		p, err := reg.Decode(e)
		if err != nil {
			return nil, err
		}
		full, err := promptstore.Resolve(ctx, src, reg, domain.TurnIDFromStream(e.StreamID), p.(turn.ContextBuilt))
		if err != nil {
			return nil, fmt.Errorf("resolve the context of %s: %w", e.StreamID, err)
		}
		if out[i].Data, err = json.Marshal(full.Texts()); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// copyTexts copies the prompt texts the copied contexts name into the
// scratch store, so that they resolve there as in the live one.
func copyTexts(ctx context.Context, src promptstore.Loader, reg promptstore.Decoder, to eventstore.Store, state []domain.Event) error {
	done := map[string]bool{}
	for _, e := range state {
		if e.Type != contextType {
			continue
		}
		p, err := reg.Decode(e)
		if err != nil {
			return err
		}
		for _, h := range promptstore.Referenced(p.(turn.ContextBuilt)) {
			if done[h] {
				continue
			}
			done[h] = true
			evs, err := src.Load(ctx, turn.PromptTextStream(h), 1)
			if err != nil {
				return fmt.Errorf("read prompt text %s: %w", h, err)
			}
			for _, t := range evs {
				ne := domain.NewEvent{ID: t.ID, Type: t.Type, Data: t.Data, Metadata: t.Metadata}
				if _, err := to.Append(ctx, t.StreamID, eventstore.NoStream, ne); err != nil && !errors.Is(err, eventstore.ErrConcurrency) {
					return fmt.Errorf("copy prompt text %s: %w", h, err)
				}
			}
		}
	}
	return nil
}
