//go:build !(linux || darwin || freebsd || openbsd || netbsd || dragonfly || illumos)

package messaging

// mapRing allocates the ring on the Go heap where anonymous memory is not
// mapped the same way.
func mapRing(n int) ([]byte, error) { return make([]byte, n), nil }

// unmapRing leaves a ring on the heap to the collector.
func unmapRing([]byte) {}
