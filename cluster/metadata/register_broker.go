package metadata

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/vmihailenco/msgpack/v5"
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
	// PreviousBrokerEpoch is the broker epoch of the node's previous
	// process if that process shut down cleanly (its logs flushed and
	// closed, the log directory's clean-shutdown marker written), else
	// -1, as Kafka's BrokerRegistration (KIP-966). Unless it is the
	// epoch of the node's current registration, the previous process is
	// taken to have shut down uncleanly, so it may have lost unflushed
	// records, and the node leaves every ELR. The field was appended: an
	// encoding without it decodes as -1.
	PreviousBrokerEpoch int64
}

// registerBrokerFields is the number of RegisterBrokerRequest's encoded
// fields, and registerBrokerFieldsV0 the number before
// PreviousBrokerEpoch was appended.
const (
	registerBrokerFields   = 8
	registerBrokerFieldsV0 = 7
)

// DecodeMsgpack implements msgpack.CustomDecoder: the array of fields as
// as_array writes it, with or without the trailing PreviousBrokerEpoch.
func (r *RegisterBrokerRequest) DecodeMsgpack(d *msgpack.Decoder) error {
	n, err := d.DecodeArrayLen()
	if err != nil {
		return err
	}
	if n == -1 {
		*r = RegisterBrokerRequest{}
		return nil
	}
	if n != registerBrokerFields && n != registerBrokerFieldsV0 {
		return fmt.Errorf("metadata: RegisterBrokerRequest of %d fields, want %d or %d", n, registerBrokerFieldsV0, registerBrokerFields)
	}
	q := RegisterBrokerRequest{PreviousBrokerEpoch: -1}
	if q.NodeID, err = d.DecodeInt32(); err != nil {
		return err
	}
	if err := d.Decode(&q.IncarnationID); err != nil {
		return err
	}
	if q.Host, err = d.DecodeString(); err != nil {
		return err
	}
	if q.Port, err = d.DecodeInt32(); err != nil {
		return err
	}
	if q.ActorAddress, err = d.DecodeString(); err != nil {
		return err
	}
	if q.Rack, err = d.DecodeString(); err != nil {
		return err
	}
	if q.NowMs, err = d.DecodeInt64(); err != nil {
		return err
	}
	if n == registerBrokerFields {
		if q.PreviousBrokerEpoch, err = d.DecodeInt64(); err != nil {
			return err
		}
	}
	*r = q
	return nil
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
//     registration in the same batch; unless r.PreviousBrokerEpoch is the
//     current registration's epoch (a clean shutdown), the node also
//     leaves every ELR (KIP-966), in the same batch.
//
// When fencing the current registration and leaving the ELRs does not fit
// one operation (OpBudget), the records are the partition changes that
// fit and the answer is REQUEST_TIMED_OUT (retriable): the broker's retry
// goes on with the rest, then registers.
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
	clean := exists && r.PreviousBrokerEpoch > 0 && r.PreviousBrokerEpoch == old.Epoch
	recs, epoch, err := registerRecords(img, reg, clean, c.minISRDefault())
	if err != nil {
		return &RegisterBrokerResult{Error: errorIn(kmsg.BrokerRegistration, err)}, nil
	}
	var budget OpBudget
	if part, ok := within(recs, &budget); !ok {
		// The old registration leads or follows too many partitions for
		// one operation: move some of them now, the retry the rest.
		return &RegisterBrokerResult{Error: apiErr(kerr.RequestTimedOut,
			"Fencing the previous registration of node %d (broker epoch %d) takes more than one operation; retry.",
			r.NodeID, old.Epoch)}, part
	}
	return &RegisterBrokerResult{BrokerEpoch: epoch}, recs
}
