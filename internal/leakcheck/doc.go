// Package leakcheck is the goroutine-leak check that every package's
// TestMain runs: goleak, told about the few goroutines of our
// dependencies that outlive a test by design and end on their own.
package leakcheck
