package metadata

import (
	"io"

	"github.com/weirmq/weir/cluster/config"
)

// Controller decides Requests against an image: the validation and
// placement half of the metadata quorum's leader, without I/O or clock.
// The metadata actor that leads the quorum calls Evaluate with its latest
// image (applied plus the batches in flight), proposes the records as one
// batch and, once it applied, sends the result to the node that asked.
type Controller struct {
	// Config is the controller's broker configuration: the defaults a
	// request leaves to it (num.partitions, default.replication.factor,
	// offsets.topic.*, min.insync.replicas), delete.topic.enable, and the
	// topic configs' broker synonyms.
	Config *config.Broker
	// Rand supplies the random bytes of new topic ids (crypto/rand's
	// Reader in a node; a seeded source in tests).
	Rand io.Reader
	// Sessions is the brokers' liveness, kept by heartbeats and read by
	// registrations and FenceExpired; nil for no session checks (a single
	// node, whose only broker is itself).
	Sessions *Sessions
	// Voters is the number of metadata quorum voters
	// (controller.quorum.voters): the default replication factors are
	// min(3, Voters). 0 counts the registered brokers instead.
	Voters int
}

// Evaluate decides req against img: its result, each item with its Kafka
// error, and the records that make the valid items, which apply to img as
// one batch and fit one operation (CheckOp: past it every valid item fails
// with POLICY_VIOLATION and no records are returned). A request that only
// validates returns no records. img is not changed; c.Sessions is (a
// heartbeat records its session).
//
// The batched broker requests (ElectLeadersRequest, AlterPartitionRequest)
// stop at one operation's records and answer the rest with a retriable
// error. A registration or heartbeat whose fencing takes more than one
// operation returns the first operation's records with a retriable error
// (RegisterBrokerRequest) or IsFenced false (BrokerHeartbeatRequest): the
// records move partitions and are to be proposed all the same, and the
// retry goes on.
func (c *Controller) Evaluate(img *Image, req Request) (Result, []Record) {
	var res Result
	var recs []Record
	validateOnly := false
	switch r := req.(type) {
	case *CreateTopicsRequest:
		res, recs = c.createTopics(img, r)
		validateOnly = r.ValidateOnly
	case *CreatePartitionsRequest:
		res, recs = c.createPartitions(img, r)
		validateOnly = r.ValidateOnly
	case *DeleteTopicsRequest:
		res, recs = c.deleteTopics(img, r)
	case *AlterConfigsRequest:
		res, recs = c.alterConfigs(img, r)
		validateOnly = r.ValidateOnly
	case *AutoCreateTopicsRequest:
		res, recs = c.autoCreateTopics(img, r)
	case *AllocateProducerIDsRequest:
		res, recs = allocateProducerIDs(img, r)
	case *RegisterBrokerRequest:
		res, recs = c.registerBroker(img, r)
	case *BrokerHeartbeatRequest:
		res, recs = c.brokerHeartbeat(img, r)
	case *ElectLeadersRequest:
		res, recs = c.electLeaders(img, r)
	case *AlterPartitionRequest:
		res, recs = c.alterPartition(img, r)
	case *MoveLeadersRequest:
		res, recs = c.moveLeaders(img, r)
	default:
		// The set is closed; a nil request is the caller's bug.
		panic("metadata: Evaluate of an unknown request")
	}
	if err := CheckOp(recs); err != nil {
		res.Fail(ErrorOf(err))
		return res, nil
	}
	if validateOnly {
		return res, nil
	}
	return res, recs
}

// dryRun applies recs to img as a proposal would and returns the result,
// so that a batch is known to apply before it is proposed and
// validate_only checks exactly what a real request would.
func dryRun(img *Image, recs []Record) (*Image, error) {
	b := NewBuilder(img)
	off := max(img.Offset(), 0)
	for _, r := range recs {
		if err := b.Apply(r, off); err != nil {
			return nil, err
		}
	}
	return b.Image(), nil
}

// newTopicID returns a random topic id that is not zero, not the metadata
// log's reserved id and not in use in img.
func (c *Controller) newTopicID(img *Image) (UUID, error) {
	for {
		var id UUID
		if _, err := io.ReadFull(c.Rand, id[:]); err != nil {
			return UUID{}, err
		}
		if _, used := img.TopicByID(id); !id.IsZero() && id != MetadataTopicID && !used {
			return id, nil
		}
	}
}

// defaultFactorBase is what the default replication factors are
// min(3, ...) of: the voters, or without them the registered brokers.
func (c *Controller) defaultFactorBase(img *Image) int {
	if c.Voters > 0 {
		return c.Voters
	}
	return len(img.Brokers())
}
