package wire

// FindCoordinator (key 10), versions 0-4.
//
// v0 has a group key only; librdkafka 2.0.2 starts consumer groups (and
// enables lz4 beside the Produce gate, docs/clients.md rule 2) only when v0 is
// advertised, and kafka-go always sends v0. v1 key_type (0 group, 1
// transactional id, KIP-98), error_message and throttle time. v2 same. v3
// flexible (KIP-482). v4 batched coordinator_keys answered per key in
// coordinators[] (KIP-699). v5 (KIP-890 errors) and v6 (share groups) are
// not served.
//
// A group's coordinator is the leader of its __consumer_offsets partition
// (whichever node that is), as Kafka answers it; without a leader, or
// when it is this node and its lease has lapsed, the key gets
// COORDINATOR_NOT_AVAILABLE. The first lookup creates
// __consumer_offsets (offsets.topic.num.partitions partitions,
// offsets.topic.replication.factor replicas, compacted), whatever
// auto.create.topics.enable says, as Kafka does, and answers once the
// creation is applied. Other key types get INVALID_REQUEST.
//
// Transactions are not served yet: a transactional id gets
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED with errTransactionsUnsupported as
// its message (v1+). It is the one FindCoordinator code that both
// librdkafka and franz-go treat as fatal for a transactional producer, so
// init_transactions / the first transactional produce fails at once with
// the message, where COORDINATOR_NOT_AVAILABLE (retriable) made clients
// retry until their own timeouts.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/actors/group"
	"github.com/weirmq/weir/cluster/metadata"
)

// Coordinator key types.
const (
	coordinatorGroup       int8 = 0
	coordinatorTransaction int8 = 1
)

// coordinatorAnswer is one key's answer.
type coordinatorAnswer struct {
	nodeID int32
	host   string
	port   int32
	code   int16
	// message is the error message (v1+); "" means the code's
	// description.
	message string
}

// errTransactionsUnsupported is the message a transactional producer gets.
const errTransactionsUnsupported = "weir does not support transactions yet: unset transactional.id " +
	"(an idempotent producer needs no transaction coordinator)"

func (h *BrokerHandler) handleFindCoordinator(ctx context.Context, req *Request) Response {
	r := req.Body.(*kmsg.FindCoordinatorRequest)
	keys := []string{r.CoordinatorKey}
	if r.Version >= 4 {
		keys = r.CoordinatorKeys
	}
	switch r.CoordinatorType {
	case coordinatorGroup:
	case coordinatorTransaction:
		h.log.Info("find coordinator refused", "client", req.ClientID, "reason", "transactions are not supported yet")
		return Reply(findCoordinatorResponse(r, keys, func(string) coordinatorAnswer {
			return coordinatorAnswer{nodeID: -1, port: -1, code: kerr.TransactionalIDAuthorizationFailed.Code,
				message: errTransactionsUnsupported}
		}))
	default:
		h.log.Info("find coordinator refused", "client", req.ClientID, "reason", "unknown key type", "key_type", r.CoordinatorType)
		return Reply(findCoordinatorResponse(r, keys, func(string) coordinatorAnswer {
			return coordinatorAnswer{nodeID: -1, port: -1, code: kerr.InvalidRequest.Code}
		}))
	}
	img := h.broker.Image()
	if _, ok := img.Topic(metadata.ConsumerOffsetsTopic); ok || len(keys) == 0 {
		return Reply(findCoordinatorResponse(r, keys, func(k string) coordinatorAnswer { return h.groupCoordinatorAnswer(img, k) }))
	}
	return Defer(func(ctx context.Context) Response {
		c := h.autoCreate(ctx, []string{metadata.ConsumerOffsetsTopic})
		if err, ok := c.failed[metadata.ConsumerOffsetsTopic]; ok {
			h.log.Warn("cannot create "+metadata.ConsumerOffsetsTopic, "err", err)
		}
		return Reply(findCoordinatorResponse(r, keys, func(k string) coordinatorAnswer { return h.groupCoordinatorAnswer(c.img, k) }))
	})
}

// groupCoordinatorAnswer is groupCoordinatorNode, but for this node while
// its lease has lapsed: its image is stale, so it names no coordinator
// (COORDINATOR_NOT_AVAILABLE) rather than itself, which would answer
// NOT_COORDINATOR (groups.go), and the client asks again, maybe another
// broker.
func (h *BrokerHandler) groupCoordinatorAnswer(img *metadata.Image, key string) coordinatorAnswer {
	a := groupCoordinatorNode(img, key)
	if a.code == 0 && a.nodeID == h.broker.NodeID() && !h.broker.LeaseValid() {
		return coordinatorAnswer{nodeID: -1, port: -1, code: kerr.CoordinatorNotAvailable.Code}
	}
	return a
}

// groupCoordinatorNode answers a group key from img: the live leader of
// the group's __consumer_offsets partition.
func groupCoordinatorNode(img *metadata.Image, key string) coordinatorAnswer {
	none := coordinatorAnswer{nodeID: -1, port: -1, code: kerr.CoordinatorNotAvailable.Code}
	t, ok := img.Topic(metadata.ConsumerOffsetsTopic)
	if !ok {
		return none
	}
	p, ok := t.Partition(group.PartitionFor(key, t.NumPartitions()))
	if !ok || !p.HasLeader() {
		return none
	}
	br, ok := img.Broker(p.Leader)
	if !ok || br.Fenced {
		return none
	}
	return coordinatorAnswer{nodeID: br.NodeID, host: br.Host, port: br.Port}
}

// findCoordinatorResponse answers every key with answer, in the shape of
// the request's version.
func findCoordinatorResponse(r *kmsg.FindCoordinatorRequest, keys []string, answer func(key string) coordinatorAnswer) *kmsg.FindCoordinatorResponse {
	resp := r.ResponseKind().(*kmsg.FindCoordinatorResponse)
	message := func(a coordinatorAnswer) *string {
		if a.code == 0 {
			return nil
		}
		m := a.message
		if m == "" {
			m = kerr.ErrorForCode(a.code).Error()
		}
		return &m
	}
	if r.Version < 4 {
		a := answer(keys[0])
		resp.ErrorCode, resp.NodeID, resp.Host, resp.Port = a.code, a.nodeID, a.host, a.port
		if r.Version >= 1 {
			resp.ErrorMessage = message(a)
		}
		return resp
	}
	resp.Coordinators = make([]kmsg.FindCoordinatorResponseCoordinator, 0, len(keys))
	for _, k := range keys {
		a := answer(k)
		c := kmsg.NewFindCoordinatorResponseCoordinator()
		c.Key, c.NodeID, c.Host, c.Port, c.ErrorCode, c.ErrorMessage = k, a.nodeID, a.host, a.port, a.code, message(a)
		resp.Coordinators = append(resp.Coordinators, c)
	}
	return resp
}
