//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly || illumos

package messaging

import "syscall"

// mapRing maps n bytes of anonymous memory, apart from the Go heap: its
// pages become resident as they are written, and the collector neither
// scans nor counts them.
func mapRing(n int) ([]byte, error) {
	return syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
}

// unmapRing returns a ring mapRing mapped; nil is none.
func unmapRing(ring []byte) {
	if ring != nil {
		syscall.Munmap(ring)
	}
}
