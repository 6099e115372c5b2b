package failover

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/weirmq/weir/bench/cluster"
)

// proxyFaults are the faults that need the proxy.
var proxyFaults = []Fault{FaultClientDisconnect, FaultLatency, FaultLoss}

// needsProxy reports whether the run puts the proxy between the clients
// and the brokers: only with --latency, --loss or a proxy fault, so that
// other runs connect directly.
func (c Config) needsProxy() bool {
	if c.Latency > 0 || c.Loss > 0 {
		return true
	}
	for _, f := range c.Faults {
		if slices.Contains(proxyFaults, f) {
			return true
		}
	}
	return false
}

// validateProxy checks the proxy's and the consumer group's settings.
func (c Config) validateProxy() error {
	switch {
	case c.Latency < 0 || c.FaultLatency < 0:
		return invalidf("latency %v, fault latency %v: need at least 0", c.Latency, c.FaultLatency)
	case c.Loss < 0 || c.Loss >= 1 || c.FaultLoss < 0 || c.FaultLoss >= 1:
		return invalidf("loss %v, fault loss %v: need 0 to below 1", c.Loss, c.FaultLoss)
	case c.FaultTime <= 0:
		return invalidf("fault time %v, need more than 0", c.FaultTime)
	case c.Consumers < 1:
		return invalidf("%d consumers, need at least 1", c.Consumers)
	}
	return nil
}

// clientNet is the proxy and what its faults watch: the faulter's view of
// the clients' network.
type clientNet struct {
	proxy *proxy
	// sends returns the current round's sends.
	sends func() *roundSends
}

// proxyFault runs one of proxyFaults on the node leading the most
// partitions. None moves a leader: out.elected stays -1.
func (fl *faulter) proxyFault(ctx context.Context, out *faultOutcome, before []cluster.PartitionState, f Fault) error {
	if fl.net == nil || fl.net.proxy == nil {
		return fmt.Errorf("fault %s: no proxy", f)
	}
	px := fl.net.proxy
	v, _ := mostLeader(before, fl.nodes.IDs())
	out.victims = []int32{v}
	out.at = time.Now()
	switch f {
	case FaultClientDisconnect:
		px.CloseClients(v)
		fl.waitProducing(ctx, out, before, v)
		return nil
	case FaultLatency:
		px.SetFault(v, impairment{Latency: fl.cfg.FaultLatency})
	case FaultLoss:
		px.SetFault(v, impairment{Loss: fl.cfg.FaultLoss})
	default:
		return fmt.Errorf("no proxy fault %q", f)
	}
	t := time.NewTimer(fl.cfg.FaultTime)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	px.ClearFault(v)
	return ctx.Err()
}

// waitProducing waits until the producer has a record acknowledged after
// out.at on a partition victim leads (over a new connection), or, when
// it sends nothing more there (franz-go's sticky partitioner may keep to
// other partitions for the rest of the round), until every record of the
// round had its outcome; for at most Config.RoundTimeout, a timeout being
// a problem of the round.
func (fl *faulter) waitProducing(ctx context.Context, out *faultOutcome, before []cluster.PartitionState, victim int32) {
	led := map[[2]int32]bool{}
	for _, p := range before {
		if p.Leader == victim {
			led[[2]int32{int32(slices.Index(fl.topics, p.Topic)), p.Partition}] = true
		}
	}
	at := out.at.UnixNano()
	_, err := cluster.PollUntil(ctx, fl.cfg.RoundTimeout, fl.cfg.PollEvery, "an acknowledgement from the disconnected leader", func(context.Context) (bool, error) {
		rs := fl.net.sends()
		if rs == nil {
			return false, nil
		}
		sent, acks := rs.snapshot()
		return ackedAfter(acks, at, led) || sent >= fl.cfg.Records && len(acks) >= sent, nil
	})
	if err != nil {
		out.problems = append(out.problems, err.Error())
	}
}

// ackedAfter reports whether acks (in callback order) hold a successful
// acknowledgement after at (Unix ns) on one of the partitions led.
func ackedAfter(acks []Ack, at int64, led map[[2]int32]bool) bool {
	for i := len(acks) - 1; i >= 0 && acks[i].DoneNs > at; i-- {
		if a := acks[i]; !a.Err && led[[2]int32{a.Topic, a.Partition}] {
			return true
		}
	}
	return false
}
