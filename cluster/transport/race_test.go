//go:build race

package transport

// raceEnabled is set under the race detector; see needRemote.
const raceEnabled = true
