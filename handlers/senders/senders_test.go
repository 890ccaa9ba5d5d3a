package senders_test

import (
	"testing"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/handlers/effects"
	"github.com/omega-gateway/omega/handlers/senders"
)

// The services refuse to be built without what they write to.
func TestConstructorsValidateTheirDependencies(t *testing.T) {
	if _, err := senders.New(nil, domain.NewRegistry()); err == nil {
		t.Error("senders.New accepted a nil store")
	}
	if _, err := effects.New(nil, domain.NewRegistry(), nil); err == nil {
		t.Error("effects.New accepted a nil store")
	}
}
