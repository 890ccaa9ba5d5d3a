package pipeline

import (
	"context"

	"github.com/omega-gateway/omega/providers"
)

// mcpServers are the MCP servers of the skills the turn's message
// triggered, for its provider call only.
func (d *Driver) mcpServers(ctx context.Context, names []string) ([]providers.MCPServer, error) {
	if d.Skills == nil || len(names) == 0 {
		return nil, nil
	}
	return d.Skills.MCPServers(ctx, names)
}

// skillNames lists the skills with their descriptions, for the classifier.
func (d *Driver) skillNames(ctx context.Context) []string {
	return d.gatherer.SkillNames(ctx)
}
