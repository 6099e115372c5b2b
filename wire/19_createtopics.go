package wire

// CreateTopics (key 19), versions 0-7.
//
// v1 validate_only and error messages (KIP-78/KIP-108). v2 throttle time.
// v4 -1 partitions or replication factor means the broker default
// (KIP-464; weir, like Kafka's controller, accepts -1 at every version).
// v5 flexible (KIP-482) and the created topic's partition count,
// replication factor and configs (KIP-525). v6 quota errors (KIP-599; weir
// has no quotas). v7 topic id (KIP-516).
//
// Every topic of a request is checked against the latest image and the
// valid ones are created in one proposal; timeout_ms bounds the wait for
// it to apply (REQUEST_TIMED_OUT after it, though the topics may still be
// created), and 0 or less waits for the proposal without a deadline.
// Manual replica assignments are served as Kafka's controller serves them.
//
// This file also holds what the topic and config admin APIs (19, 20, 33,
// 37, 44) share: the mapping of metadata and config errors to Kafka codes,
// proposal deadlines, topic ids, and the dry run that validate_only and the
// proposals use.

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/cluster/config"
	"github.com/weirmq/weir/cluster/metadata"
)

// maxPartitionsPerRequest caps the partitions one CreateTopics or
// CreatePartitions request may add, as Kafka's controller does
// (MAX_PARTITIONS_PER_BATCH): a larger request fails as a whole with
// POLICY_VIOLATION. It is checked first; the records of a request under it
// are then bounded as one metadata operation (metadata.CheckOp, Kafka's
// MAX_RECORDS_PER_USER_OP, plus a byte bound): over that, every topic that
// would have been created fails with POLICY_VIOLATION "Unable to perform
// excessively large batch operation.", validate_only included.
const maxPartitionsPerRequest = 10000

// errTooManyPartitions is the error of every topic of a request over
// maxPartitionsPerRequest.
var errTooManyPartitions = apiErr(kerr.PolicyViolation, "Excessively large number of partitions per request.")

func (h *BrokerHandler) handleCreateTopics(ctx context.Context, req *Request) Response {
	r := req.Body.(*kmsg.CreateTopicsRequest)
	cfg := h.broker.Config()
	if requestedPartitions(r, cfg) > maxPartitionsPerRequest {
		h.log.Info("create topics refused", "client", req.ClientID, "reason", "too many partitions")
		results := make([]kmsg.CreateTopicsResponseTopic, len(r.Topics))
		for i, t := range r.Topics {
			results[i] = kmsg.NewCreateTopicsResponseTopic()
			results[i].Topic = t.Topic
			setCreateError(&results[i], errTooManyPartitions)
		}
		return Reply(createTopicsResponse(r, results))
	}
	if r.ValidateOnly {
		results, recs := planCreateTopics(h.broker.Image(), cfg, r)
		if err := metadata.CheckOp(recs); err != nil {
			failCreatedTopics(results, adminError(err))
		}
		return Reply(createTopicsResponse(r, results))
	}
	return Defer(func(ctx context.Context) Response {
		pctx, cancel := proposeContext(ctx, r.TimeoutMillis)
		defer cancel()
		var results []kmsg.CreateTopicsResponseTopic
		_, err := h.broker.Propose(pctx, func(img *metadata.Image) ([]metadata.Record, error) {
			var recs []metadata.Record
			results, recs = planCreateTopics(img, cfg, r)
			return recs, nil
		})
		if err != nil {
			h.log.Info("create topics not applied", "client", req.ClientID, "err", err)
			if results == nil { // the proposal was never built
				results = make([]kmsg.CreateTopicsResponseTopic, len(r.Topics))
				for i, t := range r.Topics {
					results[i] = kmsg.NewCreateTopicsResponseTopic()
					results[i].Topic = t.Topic
				}
			}
			failCreatedTopics(results, adminError(err))
		}
		logCreateErrors(h, req, results)
		return Reply(createTopicsResponse(r, results))
	})
}

// requestedPartitions counts the partitions r asks for.
func requestedPartitions(r *kmsg.CreateTopicsRequest, cfg *config.Broker) int64 {
	var n int64
	for _, t := range r.Topics {
		switch {
		case len(t.ReplicaAssignment) > 0:
			n += int64(len(t.ReplicaAssignment))
		case t.NumPartitions == -1:
			n += cfg.Int("num.partitions")
		case t.NumPartitions > 0:
			n += int64(t.NumPartitions)
		}
	}
	return n
}

// logCreateErrors writes one line for the topics a request could not
// create.
func logCreateErrors(h *BrokerHandler, req *Request, results []kmsg.CreateTopicsResponseTopic) {
	var refused []string
	for _, t := range results {
		if t.ErrorCode != 0 {
			refused = append(refused, fmt.Sprintf("%s: %s (%s)", t.Topic, kerr.ErrorForCode(t.ErrorCode), deref(t.ErrorMessage)))
		}
	}
	if len(refused) > 0 {
		h.log.Info("create topics refused", "client", req.ClientID, "count", len(refused), "topics", boundedList(refused))
	}
}

func createTopicsResponse(r *kmsg.CreateTopicsRequest, results []kmsg.CreateTopicsResponseTopic) *kmsg.CreateTopicsResponse {
	resp := r.ResponseKind().(*kmsg.CreateTopicsResponse)
	resp.Topics = results
	if resp.Topics == nil {
		resp.Topics = []kmsg.CreateTopicsResponseTopic{}
	}
	return resp
}

// failCreatedTopics turns the successes of results into ke: their
// proposal did not apply.
func failCreatedTopics(results []kmsg.CreateTopicsResponseTopic, ke KafkaError) {
	for i := range results {
		if results[i].ErrorCode != 0 {
			continue
		}
		fresh := kmsg.NewCreateTopicsResponseTopic()
		fresh.Topic = results[i].Topic
		fresh.ErrorCode, fresh.ErrorMessage = ke.Code, &ke.Message
		results[i] = fresh
	}
}

// planCreateTopics decides every topic of r against img: the result of
// each, in request order, and the records that create the valid ones (a
// dry run over img checks them, so the batch applies as a whole).
func planCreateTopics(img *metadata.Image, cfg *config.Broker, r *kmsg.CreateTopicsRequest) ([]kmsg.CreateTopicsResponseTopic, []metadata.Record) {
	count := map[string]int{}
	for _, t := range r.Topics {
		count[t.Topic]++
	}
	results := make([]kmsg.CreateTopicsResponseTopic, 0, len(r.Topics))
	var recs []metadata.Record
	cur := img
	for _, t := range r.Topics {
		res := kmsg.NewCreateTopicsResponseTopic()
		res.Topic = t.Topic
		if count[t.Topic] > 1 {
			setCreateError(&res, apiErr(kerr.InvalidRequest, "Duplicate topic name."))
			results = append(results, res)
			continue
		}
		topicRecs, overrides, err := createTopicRecords(cur, cfg, t)
		if err == nil {
			cur, err = dryRun(cur, topicRecs)
		}
		if err != nil {
			setCreateError(&res, err)
			results = append(results, res)
			continue
		}
		recs = append(recs, topicRecs...)
		fillCreated(&res, cur, cfg, t.Topic, overrides)
		results = append(results, res)
	}
	return results, recs
}

func setCreateError(res *kmsg.CreateTopicsResponseTopic, err error) {
	ke := adminError(err)
	res.ErrorCode, res.ErrorMessage = ke.Code, &ke.Message
}

// fillCreated sets the v5+ and v7 fields of a created topic from the image
// it was created in.
func fillCreated(res *kmsg.CreateTopicsResponseTopic, img *metadata.Image, cfg *config.Broker, name string, overrides map[string]string) {
	t, _ := img.Topic(name)
	p0, _ := t.Partition(0)
	res.TopicID = t.ID()
	res.NumPartitions = t.NumPartitions()
	res.ReplicationFactor = int16(len(p0.Replicas))
	resolved, err := cfg.ResolveTopic(overrides)
	if err != nil {
		res.ConfigErrorCode = adminError(err).Code
		return
	}
	res.Configs = make([]kmsg.CreateTopicsResponseTopicConfig, 0, len(resolved))
	for _, c := range resolved {
		e := kmsg.NewCreateTopicsResponseTopicConfig()
		e.Name, e.Value, e.ReadOnly = c.Name, resolvedValue(c), c.ReadOnly
		e.Source, e.IsSensitive = int8(c.Source), c.Sensitive
		res.Configs = append(res.Configs, e)
	}
}

// createTopicRecords checks one topic of a CreateTopics request against
// img and returns the records that create it and its config overrides.
func createTopicRecords(img *metadata.Image, cfg *config.Broker, t kmsg.CreateTopicsRequestTopic) ([]metadata.Record, map[string]string, error) {
	if err := refuseInternalCreate(t.Topic); err != nil {
		return nil, nil, err
	}
	if err := metadata.ValidateTopicName(t.Topic); err != nil {
		return nil, nil, err
	}
	if _, ok := img.Topic(t.Topic); ok {
		return nil, nil, apiErr(kerr.TopicAlreadyExists, "Topic '%s' already exists.", t.Topic)
	}
	overrides, err := requestedTopicConfigs(t.Configs)
	if err != nil {
		return nil, nil, err
	}
	id := newTopicID(img)
	if len(t.ReplicaAssignment) > 0 {
		recs, err := manualTopicRecords(img, t, overrides, id)
		return recs, overrides, err
	}
	partitions, rf := t.NumPartitions, t.ReplicationFactor
	switch {
	case rf == 0 || rf < -1:
		return nil, nil, apiErr(kerr.InvalidReplicationFactor, "Replication factor must be larger than 0, or -1 to use the default value.")
	case partitions == 0 || partitions < -1:
		return nil, nil, apiErr(kerr.InvalidPartitions, "Number of partitions was set to an invalid non-positive value.")
	}
	if partitions == -1 {
		partitions = int32(cfg.Int("num.partitions"))
	}
	if rf == -1 {
		rf = cfg.DefaultReplicationFactor(registeredBrokers(img))
	}
	overrides = withTopicDefaults(cfg, rf, overrides)
	recs, err := metadata.NewTopicRecords(img, t.Topic, partitions, rf, overrides, nil, id)
	return recs, overrides, err
}

// requestedTopicConfigs collects a request's topic configs (the last of a
// repeated name wins) and validates them.
func requestedTopicConfigs(cs []kmsg.CreateTopicsRequestTopicConfig) (map[string]string, error) {
	out := make(map[string]string, len(cs))
	var nulls []string
	for _, c := range cs {
		if c.Value == nil {
			nulls = append(nulls, c.Name)
			continue
		}
		out[c.Name] = *c.Value
	}
	if len(nulls) > 0 {
		return nil, apiErr(kerr.InvalidConfig, "Null value not supported for topic configs: %s", strings.Join(nulls, ","))
	}
	if err := config.ValidateTopicConfigs(out); err != nil {
		return nil, err
	}
	return out, nil
}

// withTopicDefaults adds the overrides weir gives a new topic: with
// replication factor 3 or more, min.insync.replicas=2 unless the request
// or the broker configuration sets it (docs/DESIGN.md "Defaults").
func withTopicDefaults(cfg *config.Broker, rf int16, overrides map[string]string) map[string]string {
	if rf < 3 {
		return overrides
	}
	if _, ok := overrides["min.insync.replicas"]; ok {
		return overrides
	}
	if _, set := cfg.Value("min.insync.replicas"); set {
		return overrides
	}
	out := maps.Clone(overrides)
	if out == nil {
		out = map[string]string{}
	}
	out["min.insync.replicas"] = "2"
	return out
}

// manualTopicRecords creates topic t on the replica lists the request
// assigns, with Kafka's checks: -1 partitions and replication factor,
// partitions numbered 0..n-1 once each.
func manualTopicRecords(img *metadata.Image, t kmsg.CreateTopicsRequestTopic, overrides map[string]string, id metadata.UUID) ([]metadata.Record, error) {
	if t.ReplicationFactor != -1 {
		return nil, apiErr(kerr.InvalidRequest, "A manual partition assignment was specified, but replication factor was not set to -1.")
	}
	if t.NumPartitions != -1 {
		return nil, apiErr(kerr.InvalidRequest, "A manual partition assignment was specified, but numPartitions was not set to -1.")
	}
	byIndex := map[int32][]int32{}
	for _, a := range t.ReplicaAssignment {
		if _, dup := byIndex[a.Partition]; dup {
			return nil, apiErr(kerr.InvalidReplicaAssignment, "Found multiple manual partition assignments for partition %d", a.Partition)
		}
		byIndex[a.Partition] = a.Replicas
	}
	lists := make([][]int32, len(byIndex))
	for i := range lists {
		replicas, ok := byIndex[int32(i)]
		if !ok {
			return nil, apiErr(kerr.InvalidReplicaAssignment, "partitions should be a consecutive 0-based integer sequence")
		}
		lists[i] = replicas
	}
	parts, err := assignedPartitionRecords(img, id, 0, lists, -1)
	if err != nil {
		return nil, err
	}
	recs := []metadata.Record{metadata.TopicRecord{Name: t.Topic, TopicID: id}}
	for _, k := range slices.Sorted(maps.Keys(overrides)) {
		recs = append(recs, metadata.ConfigRecord{ResourceType: metadata.ResourceTopic, ResourceName: t.Topic, Name: k, Value: overrides[k]})
	}
	return append(recs, parts...), nil
}

// assignedPartitionRecords returns the PartitionRecords of partitions
// from, from+1, ... of topic id placed on lists, as Kafka's controller
// places a manual assignment: each list non-empty, of length rf (rf < 0:
// of the first list's length), naming registered brokers once each and at
// least one unfenced one; the ISR is the unfenced replicas, led by the
// first of them.
func assignedPartitionRecords(img *metadata.Image, id metadata.UUID, from int32, lists [][]int32, rf int) ([]metadata.Record, error) {
	var recs []metadata.Record
	for i, replicas := range lists {
		index := from + int32(i)
		if rf < 0 {
			rf = len(replicas)
		}
		if err := checkManualReplicas(img, replicas, rf); err != nil {
			return nil, err
		}
		var isr []int32
		for _, r := range replicas {
			if br, _ := img.Broker(r); !br.Fenced {
				isr = append(isr, r)
			}
		}
		if len(isr) == 0 {
			return nil, apiErr(kerr.InvalidReplicaAssignment, "All brokers specified in the manual partition assignment for partition %d are fenced or in controlled shutdown.", index)
		}
		recs = append(recs, metadata.PartitionRecord{
			TopicID: id, Partition: index, Replicas: slices.Clone(replicas), ISR: isr, Leader: isr[0],
		})
	}
	return recs, nil
}

func checkManualReplicas(img *metadata.Image, replicas []int32, rf int) error {
	if len(replicas) == 0 {
		return apiErr(kerr.InvalidReplicaAssignment, "The manual partition assignment includes an empty replica list.")
	}
	if len(replicas) != rf {
		return apiErr(kerr.InvalidReplicaAssignment, "The manual partition assignment includes a partition with %d replica(s), but this is not consistent with previous partitions, which have %d replica(s).", len(replicas), rf)
	}
	for i, r := range replicas {
		if slices.Contains(replicas[:i], r) {
			return apiErr(kerr.InvalidReplicaAssignment, "The manual partition assignment includes the broker %d more than once.", r)
		}
		if _, ok := img.Broker(r); !ok {
			return apiErr(kerr.InvalidReplicaAssignment, "The manual partition assignment includes broker %d, but no such broker is registered.", r)
		}
	}
	return nil
}

// refuseInternalCreate refuses a CreateTopics of an internal topic, with
// Kafka's answer for the one it reserves (ControllerApis refuses
// __cluster_metadata with INVALID_REQUEST, whether or not it exists).
// weir extends it to __consumer_offsets and __transaction_state, which
// Kafka's controller would create with any partition count: the group and
// transaction coordinators create them, with their own settings, and a
// different partition count would move every group to another partition.
func refuseInternalCreate(name string) error {
	if name == metadata.MetadataTopic || metadata.IsInternalTopic(name) {
		return apiErr(kerr.InvalidRequest, "Creation of internal topic %s is prohibited.", name)
	}
	return nil
}

// topicSpec is how a topic is auto-created.
type topicSpec struct {
	partitions        int32
	replicationFactor int16
	configs           map[string]string
}

// autoCreateSpec says how Metadata auto-creates topic name: Kafka's
// offsets.topic.* settings and compacted configs for __consumer_offsets,
// num.partitions and default.replication.factor for any other topic.
func autoCreateSpec(cfg *config.Broker, img *metadata.Image, name string) topicSpec {
	voters := registeredBrokers(img)
	if name == metadata.ConsumerOffsetsTopic {
		return topicSpec{
			partitions:        int32(cfg.Int("offsets.topic.num.partitions")),
			replicationFactor: cfg.OffsetsTopicReplicationFactor(voters),
			// Kafka's GroupCoordinator.offsetsTopicConfigs, with
			// offsets.topic.segment.bytes at its default.
			configs: map[string]string{"cleanup.policy": "compact", "compression.type": "producer", "segment.bytes": "104857600"},
		}
	}
	rf := cfg.DefaultReplicationFactor(voters)
	return topicSpec{
		partitions:        int32(cfg.Int("num.partitions")),
		replicationFactor: rf,
		configs:           withTopicDefaults(cfg, rf, nil),
	}
}

// newTopicID returns a random topic id that is not zero, not the metadata
// log's reserved id and not in use in img.
func newTopicID(img *metadata.Image) metadata.UUID {
	for {
		var id metadata.UUID
		_, _ = rand.Read(id[:]) // never fails (crypto/rand crashes the program instead)
		if _, used := img.TopicByID(id); !id.IsZero() && id != metadata.MetadataTopicID && !used {
			return id
		}
	}
}

// dryRun applies recs to img as a proposal would and returns the result,
// so that a batch is known to apply before it is proposed and
// validate_only checks exactly what a real request would.
func dryRun(img *metadata.Image, recs []metadata.Record) (*metadata.Image, error) {
	b := metadata.NewBuilder(img)
	off := max(img.Offset(), 0)
	for _, r := range recs {
		if err := b.Apply(r, off); err != nil {
			return nil, err
		}
	}
	return b.Image(), nil
}

// proposeContext bounds a proposal's wait by a request's timeout_ms; 0 or
// less waits without a deadline (until the connection closes).
func proposeContext(ctx context.Context, timeoutMs int32) (context.Context, context.CancelFunc) {
	if timeoutMs <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, time.Duration(timeoutMs)*time.Millisecond)
}

// apiError is a Kafka error decided by an admin API, with the message sent
// to the client.
type apiError struct {
	kafka *kerr.Error
	msg   string
}

func (e *apiError) Error() string { return e.msg }

func apiErr(k *kerr.Error, format string, args ...any) error {
	return &apiError{kafka: k, msg: fmt.Sprintf(format, args...)}
}

// adminErrors maps the sentinels of cluster/metadata and cluster/config that
// admin requests can meet to Kafka's codes.
var adminErrors = []errorRow{
	{metadata.ErrInvalidTopic, kerr.InvalidTopicException},
	{metadata.ErrTopicExists, kerr.TopicAlreadyExists},
	{metadata.ErrUnknownTopic, kerr.UnknownTopicOrPartition},
	{metadata.ErrUnknownPartition, kerr.UnknownTopicOrPartition},
	{metadata.ErrInvalidPartitions, kerr.InvalidPartitions},
	{metadata.ErrInvalidReplicationFactor, kerr.InvalidReplicationFactor},
	{metadata.ErrInvalidConfig, kerr.InvalidConfig},
	{config.ErrInvalidConfig, kerr.InvalidConfig},
	{metadata.ErrUnknownBroker, kerr.InvalidReplicaAssignment},
	{metadata.ErrBrokerFenced, kerr.InvalidReplicaAssignment},
	{metadata.ErrInvalidRecord, kerr.InvalidRequest},
	// The connection or server closed while waiting for a proposal.
	{context.Canceled, kerr.RequestTimedOut},
}

// adminError maps an admin API's error to its Kafka error; Message is the
// error's text without the sentinels' package prefixes (it names no files
// or offsets, only the request's topics and values).
func adminError(err error) KafkaError {
	if errors.Is(err, metadata.ErrOpTooLarge) {
		// Kafka's controller on a BoundedListTooLongException.
		ke := kafkaError(kerr.PolicyViolation)
		ke.Message = "Unable to perform excessively large batch operation."
		return ke
	}
	if errors.Is(err, metadata.ErrLogUnavailable) {
		// The controller cannot write its log (a full disk, no file
		// descriptors): retriable, as Kafka's controller answers a
		// request it cannot complete (REQUEST_TIMED_OUT), with the cause.
		ke := kafkaError(kerr.RequestTimedOut)
		msg := strings.TrimPrefix(err.Error(), "metadata: ")
		ke.Message = strings.ToUpper(msg[:1]) + msg[1:] + "."
		return ke
	}
	if ae, ok := errors.AsType[*apiError](err); ok {
		ke := kafkaError(ae.kafka)
		ke.Message = ae.msg
		return ke
	}
	ke := ErrorFor(err)
	for _, row := range adminErrors {
		if errors.Is(err, row.err) {
			ke = kafkaError(row.kafka)
			break
		}
	}
	if ke.Code == kerr.RequestTimedOut.Code || ke.Code == kerr.UnknownServerError.Code {
		return ke
	}
	msg := err.Error()
	for _, row := range adminErrors {
		msg = strings.ReplaceAll(msg, row.err.Error()+": ", "")
	}
	ke.Message = msg
	return ke
}

// resolvedValue is a resolved config's value as the wire carries it: null
// when it has none or is sensitive.
func resolvedValue(c config.Resolved) *string {
	if c.Null || c.Sensitive {
		return nil
	}
	v := c.Value
	return &v
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
