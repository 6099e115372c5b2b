// Package durability holds end-to-end durability tests: real `weir serve`
// processes killed with SIGKILL while real clients write to them, then
// restarted and read back. It has no code of its own besides the tests.
package durability
