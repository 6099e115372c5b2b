package metadata

import "github.com/twmb/franz-go/pkg/kmsg"

// BrokerHeartbeatRequest is a registered broker's heartbeat to the
// controller (Kafka's BrokerHeartbeat): it keeps the broker's session,
// asks to be unfenced once caught up, or fenced, or to shut down.
type BrokerHeartbeatRequest struct {
	_msgpack    struct{} `msgpack:",as_array"`
	NodeID      int32
	BrokerEpoch int64
	// MetadataOffset is the highest metadata log offset the broker has
	// applied.
	MetadataOffset int64
	// WantFence asks to be fenced (or to stay fenced).
	WantFence bool
	// WantShutDown asks to shut down (a controlled shutdown).
	WantShutDown bool
	// NowMs is the controller's clock when it decides the request (the
	// controller sets it on arrival), the time of the heartbeat.
	NowMs int64
}

// BrokerHeartbeatResult answers a BrokerHeartbeatRequest. The flags are
// the broker's state once the heartbeat's records applied, and mean
// nothing with an Error.
type BrokerHeartbeatResult struct {
	_msgpack struct{} `msgpack:",as_array"`
	Error    APIError
	// IsCaughtUp: the broker has applied the log up to its registration
	// record (Broker.RegisteredAt).
	IsCaughtUp bool
	// IsFenced: the broker is fenced.
	IsFenced bool
	// ShouldShutDown: the broker asked to shut down and may now.
	ShouldShutDown bool
}

func (*BrokerHeartbeatRequest) kind() requestKind { return kindBrokerHeartbeat }
func (*BrokerHeartbeatResult) kind() requestKind  { return kindBrokerHeartbeat }

// Refused implements Request.
func (r *BrokerHeartbeatRequest) Refused(e APIError) Result {
	return &BrokerHeartbeatResult{Error: e}
}

// Fail implements Result: the unfencing or fencing did not apply, so the
// flags are unknown; the broker's next heartbeat asks again.
func (r *BrokerHeartbeatResult) Fail(e APIError) {
	if !r.Error.Failed() {
		*r = BrokerHeartbeatResult{Error: e}
	}
}

// brokerHeartbeat decides a BrokerHeartbeatRequest, as Kafka's
// BrokerHeartbeatManager does:
//
//   - an unknown node: BROKER_ID_NOT_REGISTERED; another epoch than the
//     current registration's: STALE_BROKER_EPOCH;
//   - otherwise the heartbeat keeps the registration's session
//     (c.Sessions.Heartbeat at r.NowMs);
//   - a fenced broker that does not ask to be fenced and has applied the
//     log up to its registration (MetadataOffset >= Broker.RegisteredAt) is
//     unfenced (a BrokerUnfencedRecord);
//   - WantFence fences an unfenced broker (FenceBrokerRecords: out of every
//     ISR, its partitions leaderless; when that takes more than one
//     operation the records are the partition changes that fit, IsFenced is
//     false, and the next heartbeat goes on);
//   - WantShutDown: ShouldShutDown once the broker leads no partition
//     (in the image with this heartbeat's records). For now that is all:
//     the controller moves no leadership for it; the controlled shutdown's
//     handover of leaderships is built elsewhere, and until it is done a
//     broker that still leads is told to wait (ShouldShutDown false).
func (c *Controller) brokerHeartbeat(img *Image, r *BrokerHeartbeatRequest) (*BrokerHeartbeatResult, []Record) {
	br, err := img.currentBroker(r.NodeID, r.BrokerEpoch)
	if err != nil {
		return &BrokerHeartbeatResult{Error: errorIn(kmsg.BrokerHeartbeat, err)}, nil
	}
	if c.Sessions != nil {
		c.Sessions.Heartbeat(r.NodeID, r.BrokerEpoch, r.NowMs)
	}
	res := &BrokerHeartbeatResult{IsCaughtUp: r.MetadataOffset >= br.RegisteredAt, IsFenced: br.Fenced}
	var recs []Record
	switch {
	case br.Fenced && !r.WantFence && res.IsCaughtUp:
		recs = []Record{BrokerUnfencedRecord{NodeID: br.NodeID, BrokerEpoch: br.Epoch}}
		res.IsFenced = false
	case !br.Fenced && r.WantFence:
		var budget OpBudget
		var complete bool
		recs, complete = fenceWithin(img, br, &budget, c.minISRDefault())
		res.IsFenced = complete
	}
	if r.WantShutDown {
		after := img
		if len(recs) > 0 {
			if after, err = dryRun(img, recs); err != nil {
				return &BrokerHeartbeatResult{Error: ErrorOf(err)}, nil
			}
		}
		res.ShouldShutDown = !leadsAny(after, br.NodeID)
	}
	return res, recs
}

// leadsAny reports whether node leads a partition of img.
func leadsAny(img *Image, node int32) bool {
	for _, t := range img.topics.all() {
		for p := range t.partitions.all() {
			if p.Leader == node {
				return true
			}
		}
	}
	return false
}
