package build

import (
	"context"
	"log/slog"

	"github.com/omega-gateway/omega/domain"
	builddom "github.com/omega-gateway/omega/domain/build"
	"github.com/omega-gateway/omega/eventstore"
)

// Service starts and steers builds on behalf of a chat or the CLI: it
// needs the log and the topologies folder, not the provider (a running
// Manager does the work).
type Service struct {
	Store         eventstore.Store
	Registry      *domain.Registry
	TopologiesDir string
	Logger        *slog.Logger
}

// Start validates and imports the named topology ("" for the default)
// and requests a build of spec with it.
func (s Service) Start(ctx context.Context, spec Spec, topology string) (builddom.BuildRequested, error) {
	t, err := Prepare(ctx, s.Store, s.Registry, s.TopologiesDir, topology, s.Logger)
	if err != nil {
		return builddom.BuildRequested{}, err
	}
	spec.Topology = t
	return Request(ctx, s.Store, spec)
}

// List folds every build.
func (s Service) List(ctx context.Context) ([]builddom.State, error) {
	return List(ctx, s.Store, s.Registry)
}

// Cancel cancels the build an id prefix names, and returns its id.
func (s Service) Cancel(ctx context.Context, prefix, by string) (string, error) {
	return s.decide(ctx, prefix, by, Cancel)
}

// Resume resumes the failed build an id prefix names, and returns its id.
func (s Service) Resume(ctx context.Context, prefix, by string) (string, error) {
	return s.decide(ctx, prefix, by, Resume)
}

func (s Service) decide(ctx context.Context, prefix, by string, d func(context.Context, eventstore.Store, *domain.Registry, string, string) error) (string, error) {
	id, err := Find(ctx, s.Store, s.Registry, prefix)
	if err != nil {
		return "", err
	}
	return id, d(ctx, s.Store, s.Registry, id, by)
}
