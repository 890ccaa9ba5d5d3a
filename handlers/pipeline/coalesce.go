package pipeline

import (
	"context"
	"time"

	"github.com/omega-gateway/omega/handlers/pipeline/coalesce"
)

// Burst picks the head of a chat's open turns and those right after it
// that may become one turn with it (see coalesce.Coalescer.Burst).
func (d *Driver) Burst(ctx context.Context, ids []string) ([]string, time.Time, error) {
	c, err := d.coalescer()
	if err != nil {
		return nil, time.Time{}, err
	}
	return c.Burst(ctx, ids)
}

// Coalesce makes head answer the messages of later as well (see
// coalesce.Coalescer.Coalesce).
func (d *Driver) Coalesce(ctx context.Context, head string, later []string) error {
	c, err := d.coalescer()
	if err != nil {
		return err
	}
	return c.Coalesce(ctx, head, later)
}

// coalescer merges with the driver's commands as they are now: a test may
// swap them after NewDriver.
func (d *Driver) coalescer() (*coalesce.Coalescer, error) {
	var isCommand func(string) bool
	if d.Commands != nil {
		isCommand = d.Commands.IsCommand
	}
	return coalesce.New(d.Store, d.Registry, isCommand, d.Logger)
}
