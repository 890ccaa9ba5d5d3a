package claudecode

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/omega-gateway/omega/providers"
)

type mcpEntry struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env,omitempty"`
}

// writeMCPConfig writes {"mcpServers": {...}} to a private temporary
// file for one call and returns its path and a function removing it.
func writeMCPConfig(servers []providers.MCPServer) (string, func(), error) {
	cfg := map[string]map[string]mcpEntry{"mcpServers": {}}
	for _, s := range servers {
		args := s.Args
		if args == nil {
			args = []string{}
		}
		cfg["mcpServers"][s.Name] = mcpEntry{Command: s.Command, Args: args, Env: s.Env}
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return "", nil, fmt.Errorf("encode MCP config: %w", err)
	}
	f, err := os.CreateTemp("", "omega-mcp-*.json") // created with mode 0600
	if err != nil {
		return "", nil, fmt.Errorf("write MCP config: %w", err)
	}
	remove := func() { _ = os.Remove(f.Name()) }
	if _, err := f.Write(b); err != nil {
		_ = f.Close()
		remove()
		return "", nil, fmt.Errorf("write MCP config: %w", err)
	}
	if err := f.Close(); err != nil {
		remove()
		return "", nil, fmt.Errorf("write MCP config: %w", err)
	}
	return f.Name(), remove, nil
}
