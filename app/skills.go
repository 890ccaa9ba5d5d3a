package app

import (
	"context"
	"path/filepath"

	"github.com/omega-gateway/omega/handlers/skills"
)

// startSkills imports the skill folders of $OMEGA_DATA_DIR/skills into
// the log. A failed import is logged, not fatal: the skills already in
// the log still work, and each turn imports again.
func (r *Runtime) startSkills(ctx context.Context) error {
	lib, err := skills.New(r.Store, r.Registry, filepath.Join(r.Config.DataDir, "skills"), r.Logger)
	if err != nil {
		return err
	}
	if err := lib.Sync(ctx); err != nil {
		r.Logger.Warn("skills not imported", "err", err)
	}
	r.Skills = lib
	return nil
}
