//go:build !race

package subscribers_test

// raceEnabled is true when the tests run under the race detector, which
// makes the largest fixtures take minutes; those tests shrink them.
const raceEnabled = false
