// Package partitiontest holds multi-process tests of the replicated
// cluster under network partitions: real `weir serve` processes, each in
// a network namespace of its own (internal/netns), with links between
// them cut and healed by nftables while the test process, a client in
// the root namespace, still reaches every node. The tests need root and
// skip without it, unless WEIR_REQUIRE_NETNS=1 makes them fail instead.
//
// The package has only tests.
package partitiontest
