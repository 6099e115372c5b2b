package failover

import (
	"fmt"
	"time"

	"github.com/weirmq/weir/bench/cluster"
)

// startProxy puts the proxy between the clients and the brokers when the
// run needs it (Config.needsProxy); without it the clients connect
// directly.
func (r *runner) startProxy() error {
	if !r.cfg.needsProxy() {
		return nil
	}
	ups, err := brokerAddrs(r.nodes)
	if err != nil {
		return err
	}
	px, err := newProxy(ups, impairment{Latency: r.cfg.Latency, Loss: r.cfg.Loss}, uint64(time.Now().UnixNano()))
	if err != nil {
		return err
	}
	r.px = px
	return nil
}

// closeProxy closes the proxy, if any.
func (r *runner) closeProxy() {
	if r.px != nil {
		r.px.Close()
	}
}

// clientSeeds are the addresses the producer and the consumers start
// from: the proxy's when there is one.
func (r *runner) clientSeeds() []string {
	if r.px != nil {
		return r.px.Seeds()
	}
	return r.nodes.Seeds()
}

// clientNet is the faulter's view of the proxy, nil without one.
func (r *runner) clientNet() *clientNet {
	if r.px == nil {
		return nil
	}
	return &clientNet{proxy: r.px, sends: func() *roundSends {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.rs
	}}
}

// brokerAddrs maps each broker's node id to the host:port its Metadata
// advertises, which the proxy forwards to and replaces.
func brokerAddrs(t target) (map[int32]string, error) {
	out := map[int32]string{}
	if n, ok := t.(*netnsNodes); ok {
		t = n.Nodes // the nodes in their namespaces, at their hosts' addresses
	}
	switch t := t.(type) {
	case *cluster.Nodes:
		ids, seeds := t.IDs(), t.Seeds()
		for i, id := range ids {
			out[id] = seeds[i]
		}
	case *external:
		for id, a := range t.addr {
			out[id] = a
		}
	default:
		return nil, fmt.Errorf("proxy: no broker addresses for a %T", t)
	}
	return out, nil
}

// proxySettings states the proxy's part of the run, for the report.
func proxySettings(c Config) []string {
	if !c.needsProxy() {
		return nil
	}
	return []string{fmt.Sprintf("clients connect through the in-process TCP proxy (one loopback listener per broker, broker addresses rewritten in Metadata, FindCoordinator and DescribeCluster): latency %v each way, loss %v per frame (a lost frame waits %v, as a TCP retransmission); the latency fault adds %v, the loss fault %v, for %v",
		c.Latency, c.Loss, retransmitDelay, c.FaultLatency, c.FaultLoss, c.FaultTime)}
}
