package failover

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/weirmq/weir/bench/cluster"
	"github.com/weirmq/weir/internal/netns"
)

// partitioner is what the partition fault needs: the network whose
// hosts the nodes run in (node id on host id-1) and the producer tap's
// count of the isolated node's acknowledgements (nil for librdkafka).
type partitioner struct {
	net *netns.Network
	iso *isolatedAcks
	// cut is the node cut off now, 0 when none: no Metadata poll goes
	// to it, for its view of the cluster is stale by design.
	cut int32
}

// netnsNodes is a cluster whose nodes each run in a network namespace of
// their own; Close removes the network after the nodes.
type netnsNodes struct {
	*cluster.Nodes
	net *netns.Network
}

// Close kills the nodes and removes the network.
func (n *netnsNodes) Close() {
	n.Nodes.Close()
	_ = n.net.Close()
}

// startNetnsNodes starts the run's nodes as cluster.StartNodes does, each
// in a namespace of its own on a bridge (netns.Open), listening on its
// host's address; this process reaches every node through the bridge, as
// a client on the same LAN. It fails at once, saying what is missing,
// when network namespaces are unusable (not root, no ip or nft).
func startNetnsNodes(ctx context.Context, cfg cluster.NodesConfig) (*netnsNodes, error) {
	if err := netns.Available(); err != nil {
		return nil, fmt.Errorf("the partition fault needs network namespaces and nftables: %w (run as root with ip and nft on the PATH)", err)
	}
	nw, err := netns.Open(cfg.Nodes)
	if err != nil {
		return nil, fmt.Errorf("the partition fault's network: %w", err)
	}
	if cfg.Logger != nil && len(nw.Removed) > 0 {
		cfg.Logger.Info("removed network namespaces left by dead runs", "names", strings.Join(nw.Removed, " "))
	}
	cfg.Place = func(id int32) cluster.Placement {
		h := nw.Host(int(id - 1))
		return cluster.Placement{Host: h.Addr.String(), Wrap: func(path string, args []string) (string, []string) {
			return h.Command(path, args...)
		}}
	}
	nodes, err := cluster.StartNodes(ctx, cfg)
	if err != nil {
		return nil, errors.Join(err, nw.Close())
	}
	return &netnsNodes{Nodes: nodes, net: nw}, nil
}

// partition cuts victim off from every other node (not from this
// process, the clients' side) for Config.PartitionTime, then heals the
// cut. elected runs from the cut until a node other than the victim
// shows every partition led anew (waitElected, never asking the victim),
// -1 when that did not happen while the cut lasted.
func (fl *faulter) partition(ctx context.Context, out *faultOutcome, before []cluster.PartitionState, victim int32) error {
	pt := fl.partitions
	if pt == nil {
		return errors.New("partition fault: the nodes do not run in network namespaces")
	}
	host := pt.net.Host(int(victim - 1))
	out.victims = []int32{victim}
	pt.cut = victim
	defer func() { pt.cut = 0 }()
	if err := host.Cut(); err != nil {
		return fmt.Errorf("cut node %d: %w", victim, err)
	}
	out.at = time.Now() // the rules are in place
	if pt.iso != nil {
		pt.iso.isolate(fl.nodes.Seeds()[slices.Index(fl.nodes.IDs(), victim)], out.at)
	}
	healAt := out.at.Add(fl.cfg.PartitionTime)
	// The new leaders must show while the cut lasts: after the heal the
	// victim may lead again under the epochs it had.
	during := *fl
	during.cfg.RoundTimeout = max(time.Until(healAt), fl.cfg.PollEvery)
	out.elected = during.waitElected(ctx, out, before, out.victims)
	t := time.NewTimer(time.Until(healAt)) // the fault's length, not a wait for a state
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	t.Stop()
	if pt.iso != nil {
		pt.iso.heal(time.Now())
	}
	if err := host.Heal(); err != nil {
		return fmt.Errorf("heal node %d: %w", victim, err)
	}
	return nil
}
