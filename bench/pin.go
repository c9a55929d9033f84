package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
)

// pinning splits the machine's CPUs between the server and the load
// generator. Scenario 1's ratio to the sqlite floor compares the server
// with storage alone; when the two processes share cores, the load
// generator's CPU comes out of the server's, and the ratio measures the
// machine as much as Herald. So the ratio is judged only when each can have
// cores of its own: on 4 or more CPUs the server (and the floor, which
// stands for it) runs on the first half and the generator on the rest; on
// fewer the ratio is printed as not judged.
type pinning struct {
	server, generator string // taskset CPU lists; "" when the cores are shared
}

// planPinning returns the split for this machine, and whether there is one.
func planPinning() (pinning, bool) {
	n := runtime.NumCPU()
	if n < 4 {
		return pinning{}, false
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		return pinning{}, false
	}
	half := n / 2
	return pinning{server: fmt.Sprintf("0-%d", half-1), generator: fmt.Sprintf("%d-%d", half, n-1)}, true
}

// pinSelf moves every thread of this process onto cpus; threads made later
// inherit it from the ones that make them.
func pinSelf(cpus string) error {
	if cpus == "" {
		return nil
	}
	out, err := exec.Command("taskset", "-a", "-p", "-c", cpus, strconv.Itoa(os.Getpid())).CombinedOutput()
	if err != nil {
		return fmt.Errorf("taskset %s: %v: %s", cpus, err, out)
	}
	return nil
}

// pinned returns the command that runs bin with args on cpus ("" for any).
func pinned(cpus, bin string, args ...string) *exec.Cmd {
	if cpus == "" {
		return exec.Command(bin, args...)
	}
	return exec.Command("taskset", append([]string{"-c", cpus, bin}, args...)...)
}
