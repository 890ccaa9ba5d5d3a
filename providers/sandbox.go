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
