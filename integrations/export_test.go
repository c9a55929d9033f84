package integrations

import "time"

// SetCheckTimeout shortens the provider check's time, which a failed check
// waits out (see unreachable), so tests of failures stay fast.
func (s *Store) SetCheckTimeout(d time.Duration) { s.checkTimeout = d }
