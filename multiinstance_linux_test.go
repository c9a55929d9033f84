package main

import (
	"os/exec"
	"syscall"
)

// dieWithTest has the kernel SIGKILL cmd when the test process dies: a test
// that times out, panics or is killed leaves no Herald running on a
// database its cleanup would have dropped.
func dieWithTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
