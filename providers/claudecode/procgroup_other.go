//go:build !unix

package claudecode

import "os/exec"

// killGroupOnCancel keeps exec's default: kill the process itself.
func killGroupOnCancel(cmd *exec.Cmd) {}
