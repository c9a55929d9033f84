package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// server is a Herald process started for the benchmark. It runs as a child
// process, built from this checkout exactly as the size figure is measured,
// so its memory figures are the server's alone, not the load generator's.
type server struct {
	cmd  *exec.Cmd
	base string
	done chan error

	stopOnce sync.Once
	stopErr  error
}

// buildServer compiles Herald as scenario 6 specifies and returns the
// binary's path and size in bytes.
func buildServer(ctx context.Context, dir string) (string, int64, error) {
	bin := filepath.Join(dir, "herald")
	if err := build(ctx, ".", bin); err != nil {
		return "", 0, fmt.Errorf("build herald: %w", err)
	}
	info, err := os.Stat(bin)
	if err != nil {
		return "", 0, err
	}
	return bin, info.Size(), nil
}

// build compiles the package pkg to bin, cgo-free and stripped.
func build(ctx context.Context, pkg, bin string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-ldflags=-s -w", "-o", bin, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

// startServer runs bin on the database file db with the benchmark's keys,
// and the extra variables given, and waits until it answers /healthz.
func startServer(ctx context.Context, bin, db string, extra ...string) (*server, error) {
	return startPinned(ctx, "", bin, db, extra...)
}

// startPinned is startServer with the server on the CPUs cpus lists ("" for
// any, see pinning).
func startPinned(ctx context.Context, cpus, bin, db string, extra ...string) (*server, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	cmd := pinned(cpus, bin, "serve")
	cmd.Env = append(os.Environ(),
		"HERALD_ADDR="+addr, "HERALD_DB="+db, "HERALD_API_KEY="+benchKey,
		"HERALD_SECRET="+benchSecret, "HERALD_LOG_LEVEL=warn",
		// The benchmark measures how many writes the server can take, past
		// the per-key limit a real installation keeps.
		"HERALD_WRITE_RATE=0",
		// The inbox scenario opens thousands of sessions, each creating
		// its subscriber, from one address.
		"HERALD_INBOX_NEW_SESSIONS=0",
		// The footprint's email and chat steps post to a receiver in
		// this process.
		"HERALD_OUTBOUND_ALLOW=127.0.0.0/8")
	cmd.Env = append(cmd.Env, extra...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, base: "http://" + addr, done: make(chan error, 1)}
	go func() { s.done <- cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-s.done:
			return nil, fmt.Errorf("herald exited at start: %v", err)
		default:
		}
		if res, err := http.Get(s.base + "/healthz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.stop()
	return nil, fmt.Errorf("herald not ready after 30s")
}

// stop sends SIGTERM, as an operator would, and waits for a clean exit.
// It may be called more than once.
func (s *server) stop() error {
	s.stopOnce.Do(func() {
		s.cmd.Process.Signal(os.Interrupt)
		select {
		case s.stopErr = <-s.done:
		case <-time.After(20 * time.Second):
			s.cmd.Process.Kill()
			s.stopErr = fmt.Errorf("herald did not stop within 20s")
		}
	})
	return s.stopErr
}

// rssMB returns the server's resident set size and its peak since the last
// resetPeak, in MB, from /proc.
func (s *server) rssMB() (current, peak float64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(fields[1], 64)
		switch fields[0] {
		case "VmRSS:":
			current = kb / 1024
		case "VmHWM:":
			peak = kb / 1024
		}
	}
	return current, peak
}

// cpu returns the CPU time the server has used, user and system.
func (s *server) cpu() time.Duration { return processCPU(s.cmd.Process.Pid) }

// processCPU returns the CPU time process pid has used, user and system,
// from /proc (in clock ticks of 1/100 s, USER_HZ on Linux).
func processCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name, in parentheses, may hold spaces: count fields
	// after it. utime and stime are fields 14 and 15 of the line.
	_, rest, _ := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// ownCPU is the CPU time this process, the load generator, has used, user
// and system; the server is a child process and does not count.
func ownCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// perRequest is the server's CPU time per request over a load run that
// began at cpu0.
func (s *server) perRequest(cpu0 time.Duration, r loadResult) float64 {
	if r.Requests == 0 {
		return 0
	}
	return float64((s.cpu() - cpu0).Microseconds()) / float64(r.Requests)
}

// resetPeak restarts the kernel's peak-RSS count for the server (writing 5
// to clear_refs), so a scenario's peak is its own and not the seeding's.
func (s *server) resetPeak() {
	os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", s.cmd.Process.Pid), []byte("5"), 0)
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
