// Package durability holds end-to-end durability tests: real `weir serve`
// processes killed with SIGKILL, bounced with SIGTERM or paused with
// SIGSTOP while real clients produce to them (and a consumer group reads
// and commits), then read back: every acknowledged record must be there
// exactly once, in order, and committed offsets must never move back. It
// has no code of its own besides the tests.
package durability
