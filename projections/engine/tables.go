package engine

import (
	"context"

	"github.com/omega-gateway/omega/projections/readmodel"
)

// schemaCurrent reports, without the schema lock, whether every
// projection's recorded version and DDL fingerprint are this code's; any
// doubt answers false, and Setup takes the lock and looks again.
func (e *Engine) schemaCurrent(ctx context.Context) bool {
	for _, p := range e.projections {
		v, err := e.store.Checkpoint(ctx, schemaName(p))
		f, ferr := e.store.Checkpoint(ctx, readmodel.FingerprintName(p))
		if err != nil || ferr != nil || v != schemaVersion(p) || f != readmodel.SchemaFingerprint(e.dialect, p) {
			return false
		}
	}
	return true
}
