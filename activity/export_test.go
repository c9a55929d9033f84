package activity

import (
	"context"
	"time"
)

// SetPause replaces the sweeper's pauses for a busy writer with pause, so
// a test outside the package can record them.
func (s *Sweeper) SetPause(pause func(ctx context.Context, d time.Duration)) { s.wait = pause }
