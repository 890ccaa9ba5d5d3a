//go:build !unix

package providers

import "os/exec"

// killGroupOnCancel keeps exec's default: kill the process itself.
func killGroupOnCancel(cmd *exec.Cmd) {}
