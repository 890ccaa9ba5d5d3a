package build

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/omega-gateway/omega/domain"
	builddom "github.com/omega-gateway/omega/domain/build"
	"github.com/omega-gateway/omega/eventstore"
)

// MaxRequest bounds the text of a build request (bytes).
const MaxRequest = 8 << 10

// Spec is a build a person asks for.
type Spec struct {
	// ID names the build; empty: a new random one. A request made again
	// with the same ID (a re-run of the turn that asked) returns the
	// build recorded the first time.
	ID       string
	Request  string
	Topology builddom.Topology
	Origin   string // cli, slash, marker, keywords
	Channel  string
	ChatID   string
	SenderID string
	Language string
}

// ErrNotFound is returned for a build id that names no build.
var ErrNotFound = errors.New("no such build")

// Request records a new build: listed in the index, then its stream
// opened with BuildRequested. A running omega picks it up from the index.
func Request(ctx context.Context, store eventstore.Store, spec Spec) (builddom.BuildRequested, error) {
	text := strings.TrimSpace(spec.Request)
	switch {
	case text == "":
		return builddom.BuildRequested{}, errors.New("build: say what to build")
	case len(text) > MaxRequest:
		return builddom.BuildRequested{}, fmt.Errorf("build: the request is %d bytes, more than %d", len(text), MaxRequest)
	case len(spec.Topology.Phases) == 0:
		return builddom.BuildRequested{}, errors.New("build: the topology has no phases")
	}
	id := spec.ID
	if id == "" {
		id = uuid.NewString()
	}
	if v, err := store.StreamVersion(ctx, builddom.Stream(id)); err != nil || v > 0 {
		return existing(ctx, store, id, err)
	}
	req := builddom.BuildRequested{
		ID: id, Name: builddom.NameFor(text, id), Request: text, Origin: spec.Origin,
		Channel: spec.Channel, ChatID: spec.ChatID, SenderID: spec.SenderID, Language: spec.Language,
		Topology: spec.Topology, TopologyHash: spec.Topology.Hash(), WorstCaseCalls: spec.Topology.WorstCaseCalls(),
	}
	md := domain.Metadata{CorrelationID: id, Channel: spec.Channel, Sender: spec.SenderID}
	// The index first: a build listed without a stream is skipped, while
	// a stream nobody lists would never run.
	idx, err := domain.NewEvents(md, builddom.BuildIndexed{ID: id})
	if err != nil {
		return builddom.BuildRequested{}, err
	}
	if _, err := store.Append(ctx, builddom.IndexStream, eventstore.Any, idx...); err != nil {
		return builddom.BuildRequested{}, fmt.Errorf("build: list %s: %w", id, err)
	}
	evs, err := domain.NewEvents(md, req)
	if err != nil {
		return builddom.BuildRequested{}, err
	}
	if _, err := store.Append(ctx, builddom.Stream(id), eventstore.NoStream, evs...); err != nil {
		return builddom.BuildRequested{}, fmt.Errorf("build: record %s: %w", id, err)
	}
	return req, nil
}

// existing is the request of a build already recorded.
func existing(ctx context.Context, store eventstore.Store, id string, err error) (builddom.BuildRequested, error) {
	if err != nil {
		return builddom.BuildRequested{}, fmt.Errorf("build %s: %w", id, err)
	}
	evs, err := store.Load(ctx, builddom.Stream(id), 1)
	if err != nil || len(evs) == 0 {
		return builddom.BuildRequested{}, fmt.Errorf("build %s: %w", id, errors.Join(err, ErrNotFound))
	}
	var req builddom.BuildRequested
	if err := json.Unmarshal(evs[0].Data, &req); err != nil {
		return builddom.BuildRequested{}, fmt.Errorf("build %s: %w", id, err)
	}
	return req, nil
}

// Load folds one build's stream; a stream that does not exist is
// ErrNotFound.
func Load(ctx context.Context, store eventstore.Store, reg *domain.Registry, id string) (builddom.State, error) {
	var st builddom.State
	v, err := eventstore.Fold(ctx, store, reg, builddom.Stream(id), &st)
	if err != nil {
		return builddom.State{}, fmt.Errorf("build %s: %w", id, err)
	}
	if v == 0 {
		return builddom.State{}, fmt.Errorf("build %s: %w", id, ErrNotFound)
	}
	return st, nil
}

// IDs lists the builds in the index, oldest first.
func IDs(ctx context.Context, store eventstore.Store, reg *domain.Registry) ([]string, error) {
	ids, _, err := idsFrom(ctx, store, reg, 1)
	return ids, err
}

// idsFrom lists the builds the index names from version from on, each
// once (a resumed build is listed again), and the index's version.
func idsFrom(ctx context.Context, store eventstore.Store, reg *domain.Registry, from int64) ([]string, int64, error) {
	evs, err := store.Load(ctx, builddom.IndexStream, from)
	if err != nil {
		return nil, 0, fmt.Errorf("build index: %w", err)
	}
	version := from - 1
	seen := map[string]bool{}
	out := make([]string, 0, len(evs))
	for _, e := range evs {
		version = e.Version
		p, err := reg.Decode(e)
		if err != nil {
			return nil, 0, err
		}
		if ix, ok := p.(builddom.BuildIndexed); ok && !seen[ix.ID] {
			seen[ix.ID] = true
			out = append(out, ix.ID)
		}
	}
	return out, version, nil
}

// List folds every build in the index.
func List(ctx context.Context, store eventstore.Store, reg *domain.Registry) ([]builddom.State, error) {
	ids, err := IDs(ctx, store, reg)
	if err != nil {
		return nil, err
	}
	out := make([]builddom.State, 0, len(ids))
	for _, id := range ids {
		st, err := Load(ctx, store, reg, id)
		if errors.Is(err, ErrNotFound) {
			continue // listed, then cut off before its stream was written
		}
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// Find resolves an id or a unique prefix of one.
func Find(ctx context.Context, store eventstore.Store, reg *domain.Registry, prefix string) (string, error) {
	ids, err := IDs(ctx, store, reg)
	if err != nil {
		return "", err
	}
	var found []string
	for _, id := range ids {
		if strings.HasPrefix(id, prefix) {
			found = append(found, id)
		}
	}
	switch {
	case prefix == "" || len(found) == 0:
		return "", fmt.Errorf("build %q: %w", prefix, ErrNotFound)
	case len(found) > 1:
		return "", fmt.Errorf("build %q: %d builds start with it; give more of the id", prefix, len(found))
	}
	return found[0], nil
}

// Cancel ends a running build. Its agent's reply, if one is on its way,
// is not recorded: the append of it finds the stream moved.
func Cancel(ctx context.Context, store eventstore.Store, reg *domain.Registry, id, by string) error {
	return decide(ctx, store, reg, id, func(st builddom.State) (domain.Payload, error) {
		if st.Terminal() {
			return nil, fmt.Errorf("build %s is %s already", id, st.Status)
		}
		return builddom.BuildCancelled{By: by}, nil
	})
}

// Resume restarts a failed build at the phase it failed in, and lists it
// in the index again, which is what a running omega watches.
func Resume(ctx context.Context, store eventstore.Store, reg *domain.Registry, id, by string) error {
	err := decide(ctx, store, reg, id, func(st builddom.State) (domain.Payload, error) {
		if st.Status != builddom.StatusFailed {
			return nil, fmt.Errorf("build %s is %s: only a failed build resumes (a running one resumes by itself)", id, st.Status)
		}
		return builddom.BuildResumed{Phase: st.Phase, By: by}, nil
	})
	if err != nil {
		return err
	}
	evs, err := domain.NewEvents(domain.Metadata{CorrelationID: id}, builddom.BuildIndexed{ID: id})
	if err != nil {
		return err
	}
	if _, err := store.Append(ctx, builddom.IndexStream, eventstore.Any, evs...); err != nil {
		return fmt.Errorf("build %s resumed, but not listed again (a restart of omega runs it): %w", id, err)
	}
	return nil
}

func decide(ctx context.Context, store eventstore.Store, reg *domain.Registry, id string, d func(builddom.State) (domain.Payload, error)) error {
	for attempt := 0; ; attempt++ {
		st, err := Load(ctx, store, reg, id)
		if err != nil {
			return err
		}
		p, err := d(st)
		if err != nil {
			return err
		}
		evs, err := domain.NewEvents(domain.Metadata{CorrelationID: id}, p)
		if err != nil {
			return err
		}
		_, err = store.Append(ctx, builddom.Stream(id), eventstore.Exact(st.Version), evs...)
		if errors.Is(err, eventstore.ErrConcurrency) && attempt < 5 {
			continue
		}
		return err
	}
}
