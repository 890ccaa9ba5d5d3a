package summarizer

import (
	"strings"
	"testing"
	"time"
)

func TestNewRefusesMissingDependencies(t *testing.T) {
	if _, err := New(Deps{}, Config{Idle: time.Hour, LeaseTTL: time.Second}); err == nil || !strings.Contains(err.Error(), "dependency") {
		t.Fatalf("New with no dependencies: %v", err)
	}
}
