package build

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/omega-gateway/omega/domain"
	builddom "github.com/omega-gateway/omega/domain/build"
	"github.com/omega-gateway/omega/eventstore"
)

// Topologies is the topologies stream folded: the last recorded content
// of each topology.
type Topologies struct {
	Defs    map[string]builddom.TopologyDefined
	Version int64
}

// Apply folds one event of the topologies stream.
func (t *Topologies) Apply(p domain.Payload, version int64, _ time.Time) {
	if t.Defs == nil {
		t.Defs = map[string]builddom.TopologyDefined{}
	}
	if e, ok := p.(builddom.TopologyDefined); ok {
		t.Defs[e.Topology.Name] = e
	}
	t.Version = version
}

// Import deploys the embedded topologies into dir, reads every topology
// there, and records in the log each one that is new or changed. A
// topology that does not validate is not imported: its problems are
// returned (and the last good version stays in the log).
func Import(ctx context.Context, store eventstore.Store, reg *domain.Registry, dir string, log *slog.Logger) (Topologies, []error, error) {
	if err := Deploy(dir); err != nil {
		return Topologies{}, nil, err
	}
	found, problems := ReadAll(dir)
	for attempt := 0; ; attempt++ {
		var state Topologies
		if _, err := eventstore.Fold(ctx, store, reg, builddom.TopologiesStream, &state); err != nil {
			return Topologies{}, problems, fmt.Errorf("topologies: %w", err)
		}
		var changes []domain.Payload
		for _, t := range found {
			if h := t.Hash(); state.Defs[t.Name].Hash != h {
				changes = append(changes, builddom.TopologyDefined{Topology: t, Hash: h})
			}
		}
		if len(changes) == 0 {
			return state, problems, nil
		}
		evs, err := domain.NewEvents(domain.Metadata{CorrelationID: "topologies-import", CausationID: dir}, changes...)
		if err != nil {
			return state, problems, err
		}
		_, err = store.Append(ctx, builddom.TopologiesStream, eventstore.Exact(state.Version), evs...)
		if errors.Is(err, eventstore.ErrConcurrency) && attempt < 5 {
			continue
		}
		if err != nil {
			return state, problems, fmt.Errorf("topologies: record %d change(s): %w", len(changes), err)
		}
		for i, p := range changes {
			state.Apply(p, state.Version+1+int64(i), time.Time{})
		}
		log.Info("topologies imported", "changes", len(changes))
		return state, problems, nil
	}
}

// ReadAll reads every topology folder in dir: the ones that validate,
// and the problems of the others.
func ReadAll(dir string) ([]builddom.Topology, []error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []error{err}
	}
	var out []builddom.Topology
	var problems []error
	for _, e := range entries {
		if !e.IsDir() || !builddom.ValidName(e.Name()) {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, e.Name(), TopologyFile)); err != nil {
			continue
		}
		t, err := LoadTopology(dir, e.Name())
		if err != nil {
			problems = append(problems, err)
			continue
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, problems
}

// Prepare imports the topologies of dir and returns the named one as the
// log now records it; a topology that does not validate is refused with
// its file and line.
//
// An empty dir reads the log only: a re-run gets the topology its turn
// got, whatever the folder holds now.
func Prepare(ctx context.Context, store eventstore.Store, reg *domain.Registry, dir, name string, log *slog.Logger) (builddom.Topology, error) {
	if name == "" {
		name = DefaultTopology
	}
	if dir == "" {
		var state Topologies
		if _, err := eventstore.Fold(ctx, store, reg, builddom.TopologiesStream, &state); err != nil {
			return builddom.Topology{}, fmt.Errorf("topologies: %w", err)
		}
		def, ok := state.Defs[name]
		if !ok {
			return builddom.Topology{}, fmt.Errorf("topology %q is not defined", name)
		}
		return def.Topology, nil
	}
	if err := Deploy(dir); err != nil {
		return builddom.Topology{}, err
	}
	if _, err := LoadTopology(dir, name); err != nil {
		return builddom.Topology{}, err
	}
	state, _, err := Import(ctx, store, reg, dir, log)
	if err != nil {
		return builddom.Topology{}, err
	}
	def, ok := state.Defs[name]
	if !ok {
		return builddom.Topology{}, fmt.Errorf("topology %q is not defined", name)
	}
	return def.Topology, nil
}
