package heartbeat

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/heartbeat"
	"github.com/omega-gateway/omega/eventstore"
)

// Checklists changes checklists by command (CLI, imports): each change is
// decided on the folded stream and appended with its version.
type Checklists struct {
	Store    eventstore.Store
	Registry *domain.Registry
}

// Load folds a scope's checklist.
func (c Checklists) Load(ctx context.Context, scope string) (heartbeat.Heartbeat, error) {
	var hb heartbeat.Heartbeat
	_, err := eventstore.Fold(ctx, c.Store, c.Registry, heartbeat.HeartbeatStream(scope), &hb)
	return hb, err
}

// Decide appends what decide returns for the current checklist, retrying
// when another writer moved the stream, and returns the checklist after.
func (c Checklists) Decide(ctx context.Context, scope, cause string, decide func(heartbeat.Heartbeat) ([]domain.Payload, error)) (heartbeat.Heartbeat, error) {
	stream := heartbeat.HeartbeatStream(scope)
	for range 10 {
		var hb heartbeat.Heartbeat
		version, err := eventstore.Fold(ctx, c.Store, c.Registry, stream, &hb)
		if err != nil {
			return hb, err
		}
		ps, err := decide(hb)
		if err != nil || len(ps) == 0 {
			return hb, err
		}
		evs, err := domain.NewEvents(domain.Metadata{CorrelationID: cause, CausationID: cause}, ps...)
		if err != nil {
			return hb, err
		}
		_, err = c.Store.Append(ctx, stream, eventstore.Exact(version), evs...)
		if errors.Is(err, eventstore.ErrConcurrency) {
			continue
		}
		if err != nil {
			return hb, fmt.Errorf("record checklist change of %s: %w", scope, err)
		}
		for i, p := range ps {
			hb.Apply(p, version+int64(i)+1, time.Time{})
		}
		return hb, nil
	}
	return heartbeat.Heartbeat{}, fmt.Errorf("checklist %s kept changing", scope)
}

// ImportFile imports a HEARTBEAT.md into scope unless the same content was
// imported from that path before. A missing file is no error.
func (c Checklists) ImportFile(ctx context.Context, scope, path string) (added int, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	sum := sha256.Sum256(b)
	hash := hex.EncodeToString(sum[:])
	_, err = c.Decide(ctx, scope, "import/"+path+"/"+hash[:12], func(hb heartbeat.Heartbeat) ([]domain.Payload, error) {
		ps := hb.Import(path, hash, heartbeat.ParseHeartbeatFile(string(b)))
		added = max(len(ps)-1, 0)
		return ps, nil
	})
	return added, err
}

// ImportFiles imports the global checklist file ($dataDir/prompts/
// HEARTBEAT.md, unless it is the prompt template) and each project's
// ($dataDir/projects/<name>/HEARTBEAT.md).
func (c Checklists) ImportFiles(ctx context.Context, dataDir string) error {
	global := filepath.Join(dataDir, "prompts", "HEARTBEAT.md")
	if b, err := os.ReadFile(global); err == nil && !strings.Contains(string(b), "{checklist}") {
		if _, err := c.ImportFile(ctx, heartbeat.GlobalHeartbeat, global); err != nil {
			return err
		}
	}
	entries, err := os.ReadDir(filepath.Join(dataDir, "projects"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list projects: %w", err)
	}
	var errs []error
	for _, e := range entries {
		if e.IsDir() {
			_, err := c.ImportFile(ctx, e.Name(), filepath.Join(dataDir, "projects", e.Name(), "HEARTBEAT.md"))
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
