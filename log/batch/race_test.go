//go:build race

package batch

// raceEnabled is set under the race detector, which allocates on its own and
// so voids allocation counts.
const raceEnabled = true
