// Package netns builds small private networks out of Linux network
// namespaces for tests that cut links between processes: one namespace
// per host, each with one address in a private /24 and a veth link to a
// bridge in the test's own (root) namespace, which holds the subnet's
// first address. The test process reaches every host through the bridge,
// as a client on the same LAN would, and hosts reach each other the same
// way.
//
// A test:
//
//  1. Calls Require, which skips the test unless it runs as root with ip
//     (iproute2) and nft (nftables) on the PATH; with WEIR_REQUIRE_NETNS=1
//     it fails instead of skipping.
//  2. Calls New for a Network of n hosts. New first removes what crashed
//     earlier runs left behind (names carry the creating process's id),
//     and registers a cleanup that removes everything it made, whether the
//     test passed or not.
//  3. Starts programs inside a host with harness.InNetns (harness.Options
//     run through `ip netns exec`) or Host.Command, or opens sockets there from
//     the test process itself with Host.Listen, Host.ListenPacket,
//     Host.Dial or Host.Do.
//  4. Cuts a host off from chosen peers with Host.Cut and heals it with
//     Host.Heal. A cut drops, in both directions, every IPv4 packet between
//     the host and those peers at the host's interface (nftables netdev
//     ingress and egress hooks), like a link that silently fails: senders
//     see no error, established TCP connections simply stop, and the
//     bridge address (the test's clients) stays reachable.
//
// Names are unique per Network (a random suffix) and the subnet is a
// 10.231.x.0/24 not otherwise used on the machine, so several tests, or
// several test binaries, may hold networks at once.
//
// A program that is not a test (bench/failover's partition fault) calls
// Available, then Open, and Close when done: the package does not import
// testing, and New and Require are thin wrappers for tests over those.
package netns
