package auditlog_test

import (
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/events"
	"github.com/omega-gateway/omega/projections/projectionstest"
)

type (
	store   = projectionstest.Store
	backend = projectionstest.Backend
)

var (
	quiet    = projectionstest.Quiet
	backends = projectionstest.Backends
)

func turnsRegistry() *domain.Registry {
	r := events.NewRegistry()
	domain.RegisterTurnEvents(r)
	return r
}
