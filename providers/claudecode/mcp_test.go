package claudecode

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/omega-gateway/omega/providers"
)

// A request with MCP servers gets --mcp-config with a private file in
// Claude Code's format, removed by cleanup; one without gets neither.
func TestClaudeCodeMCPConfig(t *testing.T) {
	c := New(providers.Config{}, nil)
	inv, cleanup, err := c.invocation(providers.Request{Prompt: "hi", MCPServers: []providers.MCPServer{
		{Name: "wx", Command: "wx-mcp", Args: []string{"--units", "metric"}, Env: map[string]string{"KEY": "secret"}},
		{Name: "plain", Command: "p"},
	}}, "m")
	if err != nil {
		t.Fatal(err)
	}
	args := inv.args()
	i := slices.Index(args, "--mcp-config")
	if i < 0 || args[i+1] != inv.mcpConfig {
		t.Fatalf("args %q lack --mcp-config", args)
	}
	info, err := os.Stat(inv.mcpConfig)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("config file %v, %v", info, err)
	}
	b, _ := os.ReadFile(inv.mcpConfig)
	var cfg map[string]map[string]map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	wx, plain := cfg["mcpServers"]["wx"], cfg["mcpServers"]["plain"]
	if wx["command"] != "wx-mcp" || wx["env"].(map[string]any)["KEY"] != "secret" || len(plain["args"].([]any)) != 0 {
		t.Fatalf("config = %s", b)
	}
	cleanup()
	if _, err := os.Stat(inv.mcpConfig); !os.IsNotExist(err) {
		t.Fatalf("config not removed: %v", err)
	}

	inv, cleanup, err = c.invocation(providers.Request{Prompt: "hi"}, "m")
	if err != nil {
		t.Fatal(err)
	}
	cleanup()
	if slices.Contains(inv.args(), "--mcp-config") {
		t.Fatalf("args %q have --mcp-config without servers", inv.args())
	}
}
