package subscribers

import (
	"testing"
	"time"

	"github.com/matryer/is"
)

func TestMergePolicy(t *testing.T) {
	is := is.New(t)
	start := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return start.Add(d) }
	var m mergePolicy
	is.True(!m.due(3, at(0)))          // writes since the last tick (0 -> 3): not quiet
	is.True(m.due(3, at(time.Second))) // quiet, and never merged since the start: merge
	m.merged(3, at(time.Second))
	is.True(!m.due(3, at(2*time.Second)))       // nothing written since
	is.True(!m.due(4, at(3*time.Second)))       // a write: not quiet
	is.True(!m.due(4, at(4*time.Second)))       // quiet, but merged under mergeEvery ago
	is.True(m.due(4, at(mergeEvery+time.Hour))) // quiet, changed, and long enough ago
	m.merged(4, at(mergeEvery+time.Hour))
	is.True(!m.due(4, at(3*mergeEvery))) // no write since that merge
}
