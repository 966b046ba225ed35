//go:build !unix

package gpuresetextension

import "os/exec"

// ownProcessGroup: without Unix process groups, only the command itself
// is killed at its timeout.
func ownProcessGroup(*exec.Cmd) {}
