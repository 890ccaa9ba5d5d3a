package pipeline

import (
	"context"
	"time"
)

// Burst picks the head of a chat's open turns and those right after it
// that may become one turn with it (see coalesce.Coalescer.Burst).
func (d *Driver) Burst(ctx context.Context, ids []string) ([]string, time.Time, error) {
	return d.coalescer.Burst(ctx, ids)
}

// Coalesce makes head answer the messages of later as well (see
// coalesce.Coalescer.Coalesce).
func (d *Driver) Coalesce(ctx context.Context, head string, later []string) error {
	return d.coalescer.Coalesce(ctx, head, later)
}
