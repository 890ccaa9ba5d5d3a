package pipeline

import (
	"context"
	"fmt"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/handlers/promptstore"
)

// recordContext adds the turn's context as it is recorded: by reference
// when the driver has a prompt store (the texts it names are stored
// first), in full otherwise. The turn keeps the full context in memory.
func (d *Driver) recordContext(ctx context.Context, st *turnState, built turn.ContextBuilt) error {
	rec := built
	if d.PromptTexts != nil {
		md := domain.Metadata{CorrelationID: st.ID, CausationID: st.ID}
		var err error
		if rec, err = d.PromptTexts.Record(ctx, built, st.Received.Text, md); err != nil {
			return err
		}
	}
	st.add(rec)
	st.Context = &built
	return nil
}

// resolveContext fills in the texts of a context recorded by reference,
// so that a resumed turn gives the provider the recorded prompt.
func (d *Driver) resolveContext(ctx context.Context, st *turnState) error {
	if st.Context == nil || !st.Context.ByReferenceRecorded() {
		return nil
	}
	var full turn.ContextBuilt
	var err error
	if d.PromptTexts != nil {
		full, err = d.PromptTexts.Resolve(ctx, st.ID, *st.Context)
	} else {
		full, err = promptstore.Resolve(ctx, d.Store, d.Registry, st.ID, *st.Context)
	}
	if err != nil {
		return fmt.Errorf("resolve the context of turn %s: %w", st.ID, err)
	}
	st.Context = &full
	return nil
}
