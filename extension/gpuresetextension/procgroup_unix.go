//go:build unix

package gpuresetextension

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup runs cmd in a process group of its own and makes its
// timeout kill the whole group: a wrapper script's children (the
// nvidia-smi it runs, a sleep) die with it rather than outliving the
// timeout.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
