package metadata

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// RegisterBrokerRequest registers a broker process with the controller
// (Kafka's BrokerRegistration): every process start registers anew and
// gets a new broker epoch; the registration starts fenced
// (BrokerHeartbeatRequest unfences it once it caught up).
type RegisterBrokerRequest struct {
	_msgpack struct{} `msgpack:",as_array"`
	// NodeID is the broker's node.id.
	NodeID int32
	// IncarnationID is the random non-zero id the process chose at start:
	// a retry of the same process carries the same one.
	IncarnationID UUID
	// Host and Port are the advertised Kafka listener.
	Host string
	Port int32
	// ActorAddress is the protoactor remote address, "" without remoting.
	ActorAddress string
	// Rack is the broker.rack, "" if none.
	Rack string
	// NowMs is the controller's clock when it decides the request (the
	// controller sets it), for the session of the registration it would
	// replace.
	NowMs int64
}

// RegisterBrokerResult answers a RegisterBrokerRequest: the broker epoch
// of the registration, unless Error.
type RegisterBrokerResult struct {
	_msgpack    struct{} `msgpack:",as_array"`
	Error       APIError
	BrokerEpoch int64
}

func (*RegisterBrokerRequest) kind() requestKind { return kindRegisterBroker }
func (*RegisterBrokerResult) kind() requestKind  { return kindRegisterBroker }

// Refused implements Request.
func (r *RegisterBrokerRequest) Refused(e APIError) Result {
	return &RegisterBrokerResult{Error: e}
}

// Fail implements Result: no epoch.
func (r *RegisterBrokerResult) Fail(e APIError) {
	if !r.Error.Failed() {
		*r = RegisterBrokerResult{Error: e}
	}
}

// registerBroker decides a RegisterBrokerRequest, as Kafka's
// ClusterControlManager.registerBroker does:
//
//   - invalid fields (a negative node id, a zero incarnation id, an empty
//     host, a port outside 1-65535): INVALID_REQUEST;
//   - a retry, the same IncarnationID as the current registration: its
//     epoch, no records;
//   - the current registration is another incarnation, unfenced, and its
//     session is live (c.Sessions, at r.NowMs): DUPLICATE_BROKER_REGISTRATION,
//     another process holds the node id (without Sessions there is no such
//     check: a single node);
//   - otherwise RegisterBrokerRecords: a new epoch, fencing the current
//     registration in the same batch.
//
// When fencing the current registration does not fit one operation
// (OpBudget), the records are the partition changes that fit and the
// answer is REQUEST_TIMED_OUT (retriable): the broker's retry goes on
// with the rest, then registers.
func (c *Controller) registerBroker(img *Image, r *RegisterBrokerRequest) (*RegisterBrokerResult, []Record) {
	reg := BrokerRegistrationRecord{
		NodeID:        r.NodeID,
		IncarnationID: r.IncarnationID,
		Host:          r.Host,
		Port:          r.Port,
		ActorAddress:  r.ActorAddress,
		Rack:          r.Rack,
	}
	if err := validateRegistration(reg); err != nil {
		return &RegisterBrokerResult{Error: errorIn(kmsg.BrokerRegistration, err)}, nil
	}
	old, exists := img.brokers.get(r.NodeID)
	if exists && old.IncarnationID == r.IncarnationID {
		return &RegisterBrokerResult{BrokerEpoch: old.Epoch}, nil
	}
	if exists && !old.Fenced && c.Sessions != nil && c.Sessions.Live(old.NodeID, old.Epoch, r.NowMs) {
		return &RegisterBrokerResult{Error: apiErr(kerr.DuplicateBrokerRegistration,
			"Node %d is registered by another live process (incarnation %s, broker epoch %d); "+
				"a second process may not take the node id while that one holds it.",
			r.NodeID, old.IncarnationID, old.Epoch)}, nil
	}
	recs, epoch, err := RegisterBrokerRecords(img, reg)
	if err != nil {
		return &RegisterBrokerResult{Error: errorIn(kmsg.BrokerRegistration, err)}, nil
	}
	var budget OpBudget
	if !budget.Add(recs) {
		// The old registration leads or follows too many partitions for
		// one operation: move some of them now, the retry the rest.
		part, _ := fenceWithin(img, old, &budget)
		return &RegisterBrokerResult{Error: apiErr(kerr.RequestTimedOut,
			"Fencing the previous registration of node %d (broker epoch %d) takes more than one operation; retry.",
			r.NodeID, old.Epoch)}, part
	}
	return &RegisterBrokerResult{BrokerEpoch: epoch}, recs
}
