package metadata

import (
	"errors"

	"github.com/weirmq/weir/internal/kafkaerr"
)

// Errors returned by Apply, DecodeRecord and the proposal helpers. They are
// always wrapped with context (the record, the offset, the offending value);
// test for them with errors.Is. Those made with kafkaerr.New carry the
// Kind that internal/kafkaerr's table maps to a Kafka error code (ErrorOf);
// the others mean a bug or a corrupt log (UNKNOWN_SERVER_ERROR).
var (
	// ErrInvalidRecord: a record breaks an invariant of the image (a leader
	// outside the ISR, duplicate replicas, a partition index out of order,
	// an offset that goes back, ...). The controller never writes one.
	ErrInvalidRecord = kafkaerr.New(kafkaerr.InvalidRecord, "metadata: invalid record")

	// ErrUnknownRecordType: DecodeRecord met a record type it does not know.
	ErrUnknownRecordType = errors.New("metadata: unknown record type")

	// ErrUnsupportedVersion: DecodeRecord met a known record type at a
	// version this build cannot read (written by a newer weir).
	ErrUnsupportedVersion = errors.New("metadata: unsupported record version")

	// ErrMalformedRecord: DecodeRecord was given bytes that are not an
	// encoded record (truncated, trailing bytes, wrong shape).
	ErrMalformedRecord = errors.New("metadata: malformed record")

	// ErrInvalidTopic: an illegal topic name, or one that collides with an
	// existing topic once '.' and '_' are treated alike. Kafka:
	// INVALID_TOPIC_EXCEPTION.
	ErrInvalidTopic = kafkaerr.New(kafkaerr.InvalidTopic, "metadata: invalid topic")

	// ErrTopicExists: a topic of that name exists. Kafka:
	// TOPIC_ALREADY_EXISTS.
	ErrTopicExists = kafkaerr.New(kafkaerr.TopicExists, "metadata: topic already exists")

	// ErrInvalidTopicID: a zero or reserved topic id, or one already in use.
	ErrInvalidTopicID = errors.New("metadata: invalid topic id")

	// ErrUnknownTopic: no topic of that name or id. Kafka:
	// UNKNOWN_TOPIC_OR_PARTITION (UNKNOWN_TOPIC_ID for requests by id).
	ErrUnknownTopic = kafkaerr.New(kafkaerr.UnknownTopic, "metadata: unknown topic")

	// ErrUnknownPartition: the topic exists but not that partition. Kafka:
	// UNKNOWN_TOPIC_OR_PARTITION.
	ErrUnknownPartition = kafkaerr.New(kafkaerr.UnknownPartition, "metadata: unknown partition")

	// ErrInvalidPartitions: a partition count that is not positive, or that
	// does not grow an existing topic. Kafka: INVALID_PARTITIONS.
	ErrInvalidPartitions = kafkaerr.New(kafkaerr.InvalidPartitions, "metadata: invalid number of partitions")

	// ErrInvalidReplicationFactor: a replication factor that is not positive
	// or larger than the number of usable brokers. Kafka:
	// INVALID_REPLICATION_FACTOR.
	ErrInvalidReplicationFactor = kafkaerr.New(kafkaerr.InvalidReplicationFactor, "metadata: invalid replication factor")

	// ErrInvalidConfig: a config record or override with an empty key, an
	// unknown resource type or a bad resource name. Kafka: INVALID_CONFIG
	// (INVALID_REQUEST for a bad resource).
	ErrInvalidConfig = kafkaerr.New(kafkaerr.InvalidConfig, "metadata: invalid config")

	// ErrUnknownBroker: no registered broker has that node id.
	ErrUnknownBroker = kafkaerr.New(kafkaerr.UnknownBroker, "metadata: unknown broker")

	// ErrStaleBrokerEpoch: the broker epoch is not the one of the broker's
	// current registration. Kafka: STALE_BROKER_EPOCH.
	ErrStaleBrokerEpoch = kafkaerr.New(kafkaerr.StaleBrokerEpoch, "metadata: stale broker epoch")

	// ErrBrokerFenced: the broker is fenced and may not take the role asked
	// of it. Kafka: INELIGIBLE_REPLICA (as a new ISR member or leader).
	ErrBrokerFenced = kafkaerr.New(kafkaerr.BrokerFenced, "metadata: broker is fenced")

	// ErrStalePartitionEpoch: a proposal was made against an older partition
	// epoch than the image holds. Kafka: INVALID_UPDATE_VERSION.
	ErrStalePartitionEpoch = kafkaerr.New(kafkaerr.StalePartitionEpoch, "metadata: stale partition epoch")

	// ErrFencedLeaderEpoch: an ISR proposal carries an older leader epoch
	// than the image holds. Kafka: FENCED_LEADER_EPOCH.
	ErrFencedLeaderEpoch = kafkaerr.New(kafkaerr.FencedLeaderEpoch, "metadata: fenced leader epoch")

	// ErrNotLeader: an ISR proposal comes from a broker that does not lead
	// the partition. Kafka: NOT_LEADER_OR_FOLLOWER.
	ErrNotLeader = kafkaerr.New(kafkaerr.NotPartitionLeader, "metadata: not the partition leader")

	// ErrLeaderExists: an election was proposed for a partition that already
	// has a leader; the proposer's view is stale.
	ErrLeaderExists = kafkaerr.New(kafkaerr.LeaderExists, "metadata: partition already has a leader")

	// ErrIneligibleReplica: a proposed leader or ISR member is not an
	// unfenced replica in the ISR (for a leader) or in the assignment (for
	// an ISR member). Kafka: INELIGIBLE_REPLICA.
	ErrIneligibleReplica = kafkaerr.New(kafkaerr.IneligibleReplica, "metadata: ineligible replica")

	// ErrProducerIDsExhausted: no producer id block of the asked size is
	// left below math.MaxInt64.
	ErrProducerIDsExhausted = kafkaerr.New(kafkaerr.ProducerIDsExhausted, "metadata: producer ids exhausted")

	// ErrLogUnavailable: the metadata log cannot be written now (a full
	// disk, no file descriptors left, an I/O error); the controller refuses
	// changes until a retry succeeds. Retriable: REQUEST_TIMED_OUT.
	ErrLogUnavailable = kafkaerr.New(kafkaerr.LogUnavailable, "metadata: metadata log cannot be written")
)
