package providers

// MCPServer is an MCP server a call may use (claude-code only; the HTTP
// providers ignore it). Env may hold secrets: it goes only into the
// per-call config file, never into a log line.
type MCPServer struct {
	Name    string
	Command string
	Args    []string
	Env     map[string]string
}
