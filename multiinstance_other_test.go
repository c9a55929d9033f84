//go:build !linux

package main

import "os/exec"

// dieWithTest does nothing where the kernel has no parent-death signal; the
// test's cleanup still kills what it started.
func dieWithTest(cmd *exec.Cmd) {}
