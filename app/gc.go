package app

import "runtime/debug"

// serverMemoryLimit is the heap size past which the collector works as hard
// as it must, whatever GOGC says.
const serverMemoryLimit = 200 << 20

// gcPercent is the GOGC a server runs with.
const gcPercent = 250

// TuneGC sets the garbage collector for a server: collect when the heap has
// grown to 3.5x what the last collection kept (GOGC 250; Go defaults to
// 2x), but never let it pass serverMemoryLimit. Requests allocate much and
// keep little, so at the default the collector takes a large share of the
// CPU of a request under load (BenchmarkTrigger with GOGC=100 shows it);
// past 250 it saves little more CPU for much more resident memory
// (docs/memory.md, "The collector").
// getenv is consulted so that GOGC or GOMEMLIMIT, when set, win as they
// always do. main and the in-process benchmarks
// (apptest) both call it.
func TuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(serverMemoryLimit)
	}
}
