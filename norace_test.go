//go:build !race

package main

// raceEnabled is true when the tests run under the race detector, which
// makes the largest fixtures take minutes; those tests shrink them.
const raceEnabled = false
