package providers

import (
	"fmt"
	"strings"
)

// Sandbox is how far the Claude Code process may act on the machine.
type Sandbox string

// Sandbox modes (OMEGA_SANDBOX).
const (
	// SandboxNone gives Claude Code every permission (the seed's rwx).
	SandboxNone Sandbox = "none"
	// SandboxWorkspace lets it edit files only under its working directory
	// (the workspace) and run commands; the default.
	SandboxWorkspace Sandbox = "workspace"
	// SandboxReadonly lets it read and search, never write or run commands.
	SandboxReadonly Sandbox = "readonly"
)

// ParseSandbox accepts none, workspace or readonly; empty means workspace.
func ParseSandbox(s string) (Sandbox, error) {
	switch m := Sandbox(strings.ToLower(strings.TrimSpace(s))); m {
	case "":
		return SandboxWorkspace, nil
	case SandboxNone, SandboxWorkspace, SandboxReadonly:
		return m, nil
	default:
		return "", fmt.Errorf("must be none, workspace or readonly (got %q)", s)
	}
}

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
func (m Sandbox) permissionArgs() []string {
	switch m {
	case SandboxNone:
		return []string{"--dangerously-skip-permissions"}
	case SandboxReadonly:
		return []string{"--permission-mode", "default",
			"--allowedTools", readTools, "--disallowedTools", "Bash," + writeTools}
	default:
		return []string{"--permission-mode", "acceptEdits", "--allowedTools", readTools + ",Bash,Task"}
	}
}
