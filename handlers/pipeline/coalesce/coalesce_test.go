package coalesce

import (
	"context"
	"testing"
	"time"
)

func TestNewNeedsAStore(t *testing.T) {
	if _, err := New(nil, nil, nil, nil); err == nil {
		t.Fatal("a coalescer without a store was made")
	}
}

func TestNoTurnsNoBurst(t *testing.T) {
	c := &Coalescer{}
	burst, last, err := c.Burst(context.Background(), nil)
	if err != nil || burst != nil || last != (time.Time{}) {
		t.Fatalf("Burst of nothing = %v, %v, %v", burst, last, err)
	}
}
