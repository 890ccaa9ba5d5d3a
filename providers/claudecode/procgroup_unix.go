//go:build unix && !linux

package claudecode

import (
	"os/exec"
	"syscall"
)

// killGroupOnCancel runs cmd in its own process group and kills the whole
// group on cancel: Claude Code starts tools and MCP servers as children,
// and killing only the CLI would leave them running and holding the
// output pipes open.
func killGroupOnCancel(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
