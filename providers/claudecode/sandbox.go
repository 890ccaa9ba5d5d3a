package claudecode

import "github.com/omega-gateway/omega/providers"

// Tools Claude Code may use without asking, per mode. In -p mode there is
// nobody to ask, so anything not allowed is refused.
const (
	readTools  = "Read,Glob,Grep,LS,WebFetch,WebSearch,TodoWrite"
	writeTools = "Edit,MultiEdit,Write,NotebookEdit"
)

// permissionArgs are the CLI flags for mode. In workspace mode acceptEdits
// approves file edits inside the working directory only; an edit elsewhere
// would need a prompt, which -p refuses. The write tools are deliberately
// not in the allow list: a bare "Edit" rule would approve edits anywhere.
// Readonly removes the write tools and the shell altogether.
func permissionArgs(m providers.Sandbox) []string {
	switch m {
	case providers.SandboxNone:
		return []string{"--dangerously-skip-permissions"}
	case providers.SandboxReadonly:
		return []string{"--permission-mode", "default",
			"--allowedTools", readTools, "--disallowedTools", "Bash," + writeTools}
	default:
		return []string{"--permission-mode", "acceptEdits", "--allowedTools", readTools + ",Bash,Task"}
	}
}
