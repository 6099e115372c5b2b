package cluster

import (
	"fmt"
	"net"
	"strconv"
)

// nodeAddr is where one node listens, and how it is started there.
type nodeAddr struct {
	kafka, gossip string
	extra         []string // more `weir serve` flags
	wrap          func(path string, args []string) (string, []string)
}

// nodeAddrs returns the nodes' addresses: free loopback ports, or the
// fixed ports on each node's own address when cfg.place is set.
func nodeAddrs(cfg Config) ([]nodeAddr, error) {
	out := make([]nodeAddr, cfg.Nodes)
	if cfg.place == nil {
		addrs, err := freeLoopbackAddrs(2 * cfg.Nodes)
		if err != nil {
			return nil, err
		}
		for i := range out {
			out[i] = nodeAddr{kafka: addrs[2*i], gossip: addrs[2*i+1]}
		}
		return out, nil
	}
	for i := range out {
		p := cfg.place(int32(i + 1))
		if net.ParseIP(p.Host) == nil {
			return nil, fmt.Errorf("node %d placed at %q: not an IP address", i+1, p.Host)
		}
		at := func(port int) string { return net.JoinHostPort(p.Host, strconv.Itoa(port)) }
		out[i] = nodeAddr{kafka: at(PlacedKafkaPort), gossip: at(PlacedGossipPort),
			extra: []string{"--remote-addr", at(PlacedRemotePort)}, wrap: p.Wrap}
	}
	return out, nil
}
