package netns

import (
	"fmt"
	"strings"
)

// cutTable is the nftables table (family netdev) that holds a host's cut,
// inside the host's namespace.
const cutTable = "weir_cut"

// Cut cuts h off from peers (every other host of the network when none
// are given): from now on every IPv4 packet from h to a peer's address,
// and from a peer's address to h, TCP, UDP or any other, is dropped at
// h's interface, in both directions, before the peer or h sees it. The
// senders get no error: it is a link that silently stopped working, not a
// refusal. Traffic with the bridge address (the test process) and with
// hosts not named still flows. A second Cut replaces the first; Heal
// undoes it. The rules live in h's namespace (nftables netdev ingress and
// egress hooks on h.Link).
func (h *Host) Cut(peers ...*Host) error {
	if len(peers) == 0 {
		for _, p := range h.net.Hosts {
			if p != h {
				peers = append(peers, p)
			}
		}
	}
	addrs := make([]string, 0, len(peers))
	for _, p := range peers {
		if p == h {
			return fmt.Errorf("netns: cut host %d from itself", h.Index)
		}
		addrs = append(addrs, p.Addr.String())
	}
	if len(addrs) == 0 {
		return fmt.Errorf("netns: cut host %d from no one: the network has no other host", h.Index)
	}
	set := "{ " + strings.Join(addrs, ", ") + " }"
	// One transaction: replace any earlier cut atomically.
	script := fmt.Sprintf(`add table netdev %[1]s
delete table netdev %[1]s
table netdev %[1]s {
	chain in {
		type filter hook ingress device %[2]q priority filter; policy accept;
		ip saddr %[3]s drop
	}
	chain out {
		type filter hook egress device %[2]q priority filter; policy accept;
		ip daddr %[3]s drop
	}
}
`, cutTable, h.Link, set)
	if _, err := h.nft(script); err != nil {
		return fmt.Errorf("netns: cut host %d from %s: %w", h.Index, set, err)
	}
	return nil
}

// Heal removes h's cut, if any: every link of h works again.
func (h *Host) Heal() error {
	script := fmt.Sprintf("add table netdev %[1]s\ndelete table netdev %[1]s\n", cutTable)
	if _, err := h.nft(script); err != nil {
		return fmt.Errorf("netns: heal host %d: %w", h.Index, err)
	}
	return nil
}

// Ruleset returns the nftables ruleset of h's namespace (nft list
// ruleset), for a test's log.
func (h *Host) Ruleset() (string, error) {
	return run("", "ip", "netns", "exec", h.Name, "nft", "list", "ruleset")
}

// nft runs an nft script inside h's namespace.
func (h *Host) nft(script string) (string, error) {
	return run(script, "ip", "netns", "exec", h.Name, "nft", "-f", "-")
}
