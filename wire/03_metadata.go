package wire

// Metadata (key 3), versions 0-12.
//
// v0: an empty topic list asks for every topic; v1+: a null list asks for
// every topic and an empty one for none (KIP-204 kept v0's meaning), v1
// adds controller_id, is_internal and racks. v2 cluster_id (KIP-78). v4
// allow_auto_topic_creation (KIP-204; v0-3 always auto-create). v5
// offline_replicas (KIP-112). v7 leader_epoch (KIP-320). v8 authorized
// operations (KIP-430). v9 flexible (KIP-482). v10 topic ids (KIP-516),
// v12 lookup by topic id (v10-11 reject it as Kafka does). v13 (KIP-1102
// top-level error) is not served.
//
// Missing topics are created when the request allows it and the broker's
// auto.create.topics.enable is true: the controller creates them
// (metadata.AutoCreateTopicsRequest) with num.partitions partitions and
// default.replication.factor replicas (__consumer_offsets with the
// offsets.topic.* settings, as Kafka's AutoTopicCreationManager does). The
// answer waits until the creation is applied, so the client gets the new
// topic's leaders at once instead of LEADER_NOT_AVAILABLE; only a creation
// that does not apply in time gets LEADER_NOT_AVAILABLE. One request
// creates at most one bounded metadata operation's worth of topics
// (metadata.OpBudget: 10,000 records, Kafka's MAX_RECORDS_PER_USER_OP, and
// 4 MiB), in request order; the rest are answered LEADER_NOT_AVAILABLE and
// created by the client's retries, where Kafka's controller would refuse
// the whole creation. weir's metadata log (__cluster_metadata) is never
// a topic and is never listed.

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/cluster/metadata"
)

// autoCreateWait bounds how long a Metadata request waits for the topics it
// auto-creates to be applied before it answers LEADER_NOT_AVAILABLE for
// them (the client retries; the creation may still complete).
const autoCreateWait = 10 * time.Second

// Authorized-operation bitfields (KIP-430). weir has no authorizer, so, as
// Kafka without one, every operation the resource type supports is
// allowed: READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS
// and ALTER_CONFIGS on a topic; CREATE, ALTER, DESCRIBE, CLUSTER_ACTION,
// DESCRIBE_CONFIGS, ALTER_CONFIGS and IDEMPOTENT_WRITE on the cluster.
const (
	topicAuthorizedOps   = 1<<3 | 1<<4 | 1<<5 | 1<<6 | 1<<7 | 1<<8 | 1<<10 | 1<<11
	clusterAuthorizedOps = 1<<5 | 1<<7 | 1<<8 | 1<<9 | 1<<10 | 1<<11 | 1<<12
	// authorizedOpsOmitted is what Kafka sends when the operations were
	// not asked for.
	authorizedOpsOmitted = -2147483648
)

// metadataQuery is one topic a Metadata request names: by name, or (v12+)
// by id with a null name.
type metadataQuery struct {
	name string
	id   metadata.UUID
	byID bool
}

func (h *BrokerHandler) handleMetadata(ctx context.Context, req *Request) Response {
	r := req.Body.(*kmsg.MetadataRequest)
	img := h.broker.Image()
	all := r.Topics == nil || (r.Version == 0 && len(r.Topics) == 0)
	if all {
		if electing(img, nil, h.broker.PeerDown) {
			return Defer(func(ctx context.Context) Response {
				return Reply(h.metadataResponse(r, h.awaitElections(ctx, nil), true, nil, nil))
			})
		}
		return Reply(h.metadataResponse(r, img, true, nil, nil))
	}
	queries, bad := metadataQueries(r)
	if bad != "" {
		h.log.Info("metadata request rejected", "client", req.ClientID, "reason", bad)
		return Reply(metadataErrorResponse(r, queries, kerr.InvalidRequest.Code))
	}
	missing := h.autoCreatable(r, img, queries)
	if len(missing) == 0 {
		if electing(img, queries, h.broker.PeerDown) {
			return Defer(func(ctx context.Context) Response {
				return Reply(h.metadataResponse(r, h.awaitElections(ctx, queries), false, queries, nil))
			})
		}
		return Reply(h.metadataResponse(r, img, false, queries, nil))
	}
	return Defer(func(ctx context.Context) Response {
		c := h.autoCreate(ctx, missing)
		return Reply(h.metadataResponse(r, c.img, false, queries, &c))
	})
}

// metadataQueries lists the topics r names, each once, in request order,
// and says why the request is invalid ("" if it is not): a topic id
// before v12, or a topic with neither name nor id.
func metadataQueries(r *kmsg.MetadataRequest) ([]metadataQuery, string) {
	var out []metadataQuery
	seenName := map[string]bool{}
	seenID := map[metadata.UUID]bool{}
	bad := ""
	for _, t := range r.Topics {
		id := metadata.UUID(t.TopicID)
		switch {
		case !id.IsZero() && r.Version < 12:
			bad = fmt.Sprintf("Topic IDs are not supported in requests for version %d", r.Version)
		case t.Topic == nil && id.IsZero():
			bad = "Topic name can not be null"
		case t.Topic == nil:
			if !seenID[id] {
				seenID[id] = true
				out = append(out, metadataQuery{id: id, byID: true})
			}
			continue
		}
		name := ""
		if t.Topic != nil {
			name = *t.Topic
		}
		if !seenName[name] {
			seenName[name] = true
			out = append(out, metadataQuery{name: name})
		}
	}
	return out, bad
}

// autoCreatable returns the named topics missing from img that this
// request may create: valid names, allowed by the request (always before
// v4) and by auto.create.topics.enable.
func (h *BrokerHandler) autoCreatable(r *kmsg.MetadataRequest, img *metadata.Image, queries []metadataQuery) []string {
	allowed := (r.Version < 4 || r.AllowAutoTopicCreation) && h.broker.Config().Bool("auto.create.topics.enable")
	if !allowed {
		return nil
	}
	var out []string
	for _, q := range queries {
		if q.byID || metadata.ValidateTopicName(q.name) != nil || q.name == metadata.TransactionStateTopic {
			continue
		}
		if _, ok := img.Topic(q.name); !ok {
			out = append(out, q.name)
		}
	}
	return out
}

// creation is the outcome of auto-creating topics.
type creation struct {
	// img is the image to answer from: the latest one once the controller
	// answered (it holds the topics created), or if it did not in time.
	img *metadata.Image
	// asked are the topics the request asked to create.
	asked map[string]bool
	// failed holds the error of each topic that could not be created,
	// LEADER_NOT_AVAILABLE for those its retry may create.
	failed map[string]metadata.APIError
}

// autoCreate asks the controller to create the topics in names that do not
// exist (metadata.AutoCreateTopicsRequest: the controller's defaults,
// __consumer_offsets with the offsets.topic.* settings).
func (h *BrokerHandler) autoCreate(ctx context.Context, names []string) creation {
	ctx, cancel := context.WithTimeout(ctx, autoCreateWait)
	defer cancel()
	c := creation{asked: map[string]bool{}, failed: map[string]metadata.APIError{}}
	for _, n := range names {
		c.asked[n] = true
	}
	res, err := askController[*metadata.AutoCreateTopicsResult](ctx, h.broker, &metadata.AutoCreateTopicsRequest{Names: names})
	if err != nil {
		h.log.Info("auto-creating topics did not apply in time", "count", len(names), "topics", boundedList(names), "err", err)
	}
	var refused []string
	for _, t := range res.Topics {
		if t.Error.Failed() {
			c.failed[t.Name] = t.Error
			if t.Error.Code != kerr.LeaderNotAvailable.Code {
				refused = append(refused, fmt.Sprintf("%s: %v", t.Name, t.Error))
			}
		}
	}
	if len(refused) > 0 {
		slices.Sort(refused)
		h.log.Info("auto-creating topics refused", "count", len(refused), "topics", boundedList(refused))
	}
	c.img = h.broker.Image()
	return c
}

// metadataResponse answers r from img: every topic when all is set, else
// the queried ones, with the outcome of c (nil if nothing was
// auto-created). While this node's lease has lapsed, the partitions img
// says it leads are answered without a leader (LEADER_NOT_AVAILABLE): a
// cut-off or resumed node's image is stale, another node may lead them by
// now, and a client told this node would only come back to it (its
// produces and fetches fail without the lease) instead of asking another
// broker again.
func (h *BrokerHandler) metadataResponse(r *kmsg.MetadataRequest, img *metadata.Image, all bool, queries []metadataQuery, c *creation) *kmsg.MetadataResponse {
	resp := h.metadataFrom(r, img, all, queries, c)
	if !h.broker.LeaseValid() {
		self := h.broker.NodeID()
		for ti := range resp.Topics {
			for pi := range resp.Topics[ti].Partitions {
				if p := &resp.Topics[ti].Partitions[pi]; p.Leader == self {
					p.Leader, p.ErrorCode = -1, kerr.LeaderNotAvailable.Code
				}
			}
		}
	}
	return resp
}

// metadataFrom is metadataResponse from img as it is.
func (h *BrokerHandler) metadataFrom(r *kmsg.MetadataRequest, img *metadata.Image, all bool, queries []metadataQuery, c *creation) *kmsg.MetadataResponse {
	resp := r.ResponseKind().(*kmsg.MetadataResponse)
	resp.Brokers = metadataBrokers(img)
	resp.ClusterID = clusterIDPtr(img)
	resp.ControllerID = controllerID(img)
	resp.AuthorizedOperations = authorizedOpsOmitted
	if r.IncludeClusterAuthorizedOperations {
		resp.AuthorizedOperations = clusterAuthorizedOps
	}
	if all {
		resp.Topics = make([]kmsg.MetadataResponseTopic, 0, img.NumTopics())
		for _, t := range img.Topics() {
			resp.Topics = append(resp.Topics, metadataTopic(r, img, t))
		}
		return resp
	}
	resp.Topics = make([]kmsg.MetadataResponseTopic, 0, len(queries))
	for _, q := range queries {
		resp.Topics = append(resp.Topics, metadataQueried(r, img, q, c))
	}
	return resp
}

// metadataQueried answers one queried topic.
func metadataQueried(r *kmsg.MetadataRequest, img *metadata.Image, q metadataQuery, c *creation) kmsg.MetadataResponseTopic {
	if q.byID {
		if t, ok := img.TopicByID(q.id); ok {
			return metadataTopic(r, img, t)
		}
		rt := emptyMetadataTopic(nil, kerr.UnknownTopicID.Code)
		rt.TopicID = q.id
		return rt
	}
	if t, ok := img.Topic(q.name); ok {
		return metadataTopic(r, img, t)
	}
	name := q.name
	if err := metadata.ValidateTopicName(name); err != nil {
		return emptyMetadataTopic(&name, kerr.InvalidTopicException.Code)
	}
	if c != nil {
		if e, ok := c.failed[name]; ok {
			return emptyMetadataTopic(&name, e.Code)
		}
		if c.asked[name] {
			// Being created, but the creation has not applied (yet).
			return emptyMetadataTopic(&name, kerr.LeaderNotAvailable.Code)
		}
	}
	return emptyMetadataTopic(&name, kerr.UnknownTopicOrPartition.Code)
}

// emptyMetadataTopic is a topic answered with an error and no partitions.
func emptyMetadataTopic(name *string, code int16) kmsg.MetadataResponseTopic {
	t := kmsg.NewMetadataResponseTopic()
	t.Topic = name
	t.ErrorCode = code
	t.IsInternal = name != nil && metadata.IsInternalTopic(*name)
	t.Partitions = []kmsg.MetadataResponseTopicPartition{}
	t.AuthorizedOperations = authorizedOpsOmitted
	return t
}

// metadataErrorResponse answers every queried topic with code, as Kafka
// does for a request it rejects as a whole.
func metadataErrorResponse(r *kmsg.MetadataRequest, queries []metadataQuery, code int16) *kmsg.MetadataResponse {
	resp := r.ResponseKind().(*kmsg.MetadataResponse)
	resp.Brokers = []kmsg.MetadataResponseBroker{}
	resp.AuthorizedOperations = authorizedOpsOmitted
	resp.Topics = []kmsg.MetadataResponseTopic{}
	for _, q := range queries {
		name := q.name
		t := emptyMetadataTopic(&name, code)
		if q.byID {
			t = emptyMetadataTopic(nil, code)
			t.TopicID = q.id
		}
		resp.Topics = append(resp.Topics, t)
	}
	return resp
}

// metadataTopic describes topic t as img holds it.
func metadataTopic(r *kmsg.MetadataRequest, img *metadata.Image, t *metadata.Topic) kmsg.MetadataResponseTopic {
	name := t.Name()
	out := kmsg.NewMetadataResponseTopic()
	out.Topic = &name
	out.TopicID = t.ID()
	out.IsInternal = t.Internal()
	out.AuthorizedOperations = authorizedOpsOmitted
	if r.IncludeTopicAuthorizedOperations {
		out.AuthorizedOperations = topicAuthorizedOps
	}
	out.Partitions = make([]kmsg.MetadataResponseTopicPartition, 0, t.NumPartitions())
	for i := range t.NumPartitions() {
		p, _ := t.Partition(i)
		out.Partitions = append(out.Partitions, metadataPartition(img, p))
	}
	return out
}

// metadataPartition describes one partition: LEADER_NOT_AVAILABLE with
// leader -1 when it has none; offline replicas are those whose broker is
// fenced or not registered.
func metadataPartition(img *metadata.Image, p metadata.Partition) kmsg.MetadataResponseTopicPartition {
	out := kmsg.NewMetadataResponseTopicPartition()
	out.Partition = p.Index
	out.Leader = p.Leader
	out.LeaderEpoch = p.LeaderEpoch
	if !p.HasLeader() {
		out.ErrorCode = kerr.LeaderNotAvailable.Code
		out.Leader = -1
	}
	// The image's slices are never modified; encoding only reads them.
	out.Replicas = p.Replicas
	out.ISR = p.ISR
	out.OfflineReplicas = []int32{}
	for _, id := range p.Replicas {
		if br, ok := img.Broker(id); !ok || br.Fenced {
			out.OfflineReplicas = append(out.OfflineReplicas, id)
		}
	}
	return out
}

// metadataBrokers lists every registered, unfenced broker with its
// advertised listener.
func metadataBrokers(img *metadata.Image) []kmsg.MetadataResponseBroker {
	out := []kmsg.MetadataResponseBroker{}
	for _, br := range img.Brokers() {
		if br.Fenced {
			continue
		}
		b := kmsg.NewMetadataResponseBroker()
		b.NodeID, b.Host, b.Port, b.Rack = br.NodeID, br.Host, br.Port, rackPtr(br.Rack)
		out = append(out, b)
	}
	return out
}

// controllerID is the controller_id clients are given: the quorum leader
// when it is a live broker, else (as Kafka's KRaft brokers do, whose
// controllers clients cannot reach) the lowest live broker, else -1.
func controllerID(img *metadata.Image) int32 {
	if br, ok := img.Broker(img.ControllerID()); ok && !br.Fenced {
		return br.NodeID
	}
	for _, br := range img.Brokers() {
		if !br.Fenced {
			return br.NodeID
		}
	}
	return -1
}

func clusterIDPtr(img *metadata.Image) *string {
	if img.ClusterID() == "" {
		return nil
	}
	id := img.ClusterID()
	return &id
}

func rackPtr(rack string) *string {
	if rack == "" {
		return nil
	}
	return &rack
}
