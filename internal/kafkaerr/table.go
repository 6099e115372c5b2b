package kafkaerr

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/log"
	"github.com/weirmq/weir/log/batch"
)

// row maps the errors that match err (errors.Is: a sentinel, or a Kind) to
// a Kafka error, in the requests of apis (none: in every request).
type row struct {
	err   error
	apis  []kmsg.Key
	kafka *kerr.Error
}

// The broker-to-controller requests whose codes differ from the admin
// requests' for one condition.
var (
	electLeaders        = []kmsg.Key{kmsg.ElectLeaders}
	alterPartition      = []kmsg.Key{kmsg.AlterPartition}
	electOrAlter        = []kmsg.Key{kmsg.ElectLeaders, kmsg.AlterPartition}
	unregisteredBrokers = []kmsg.Key{kmsg.BrokerHeartbeat, kmsg.ElectLeaders, kmsg.AllocateProducerIDs}
	currentEpochs       = []kmsg.Key{kmsg.BrokerHeartbeat, kmsg.ElectLeaders, kmsg.AlterPartition, kmsg.AllocateProducerIDs}
)

// table is the one mapping from internal errors to Kafka errors. For a
// request of an API, the rows limited to that API come first, in order;
// then the rows for every request, in order. The first row whose error the
// error matches wins, so an error wrapping two gets the earlier row:
// what stopped the node or its quorum comes before what the request met,
// and the log's sentinels, which say where a problem is (on disk), come
// before the batch codec's, which say what it is.
var table = [...]row{
	// The node and its metadata quorum, whatever the request.

	// A node whose metadata actor stopped for good answers every
	// controller request UNKNOWN_SERVER_ERROR, whatever failed inside it
	// (a corrupt metadata log is not the client's KAFKA_STORAGE_ERROR).
	{NodeFailed, nil, kerr.UnknownServerError},
	// A proposal made on, or dropped by, a node that lost the quorum's
	// leadership: Kafka's controller answers a raft NotLeaderException
	// with NOT_CONTROLLER (EventHandlerExceptionInfo), on which clients
	// look the controller up again and retry.
	{NotController, nil, kerr.NotController},
	// The metadata log cannot be written now (a full disk, no file
	// descriptors): retriable, as Kafka's controller answers a request it
	// cannot complete in time.
	{LogUnavailable, nil, kerr.RequestTimedOut},
	// An operation over the controller's record or byte bound: Kafka's
	// BoundedListTooLongException is POLICY_VIOLATION.
	{OpTooLarge, nil, kerr.PolicyViolation},

	// Broker-to-controller requests, where Kafka's controller answers one
	// condition with another code than the admin requests do.

	// An unregistered node heartbeating, proposing a leader or asking for
	// producer ids. (Kafka answers the heartbeat and the producer ids
	// STALE_BROKER_EPOCH: QuorumController.processBrokerHeartbeat,
	// ClusterControlManager.checkBrokerEpoch.)
	{UnknownBroker, unregisteredBrokers, kerr.BrokerIDNotRegistered},
	// An unregistered node proposing an ISR change:
	// ClusterControlManager.checkBrokerEpoch's STALE_BROKER_EPOCH.
	{UnknownBroker, alterPartition, kerr.StaleBrokerEpoch},
	{StaleBrokerEpoch, currentEpochs, kerr.StaleBrokerEpoch},
	// These requests name topics by id.
	{UnknownTopic, electOrAlter, kerr.UnknownTopicID},
	// A fenced candidate or ISR member is not eligible (KIP-966).
	{BrokerFenced, electLeaders, kerr.IneligibleReplica},
	{IneligibleReplica, electOrAlter, kerr.IneligibleReplica},
	// An election proposed against an older partition epoch lost to
	// another: the partition's leader is on its way.
	{StalePartitionEpoch, electLeaders, kerr.LeaderNotAvailable},
	// An ISR change against an older partition epoch.
	{StalePartitionEpoch, alterPartition, kerr.InvalidUpdateVersion},
	{LeaderExists, electLeaders, kerr.ElectionNotNeeded},
	{NotPartitionLeader, alterPartition, kerr.NotLeaderForPartition},
	{FencedLeaderEpoch, alterPartition, kerr.FencedLeaderEpoch},

	// The controller's checks of admin requests (CreateTopics,
	// CreatePartitions, DeleteTopics, the config APIs) and of every
	// request's records.

	{InvalidTopic, nil, kerr.InvalidTopicException},
	{TopicExists, nil, kerr.TopicAlreadyExists},
	{UnknownTopic, nil, kerr.UnknownTopicOrPartition},
	{UnknownPartition, nil, kerr.UnknownTopicOrPartition},
	{InvalidPartitions, nil, kerr.InvalidPartitions},
	{InvalidReplicationFactor, nil, kerr.InvalidReplicationFactor},
	{InvalidConfig, nil, kerr.InvalidConfig},
	// A manual assignment naming a broker that is not registered, or
	// fenced: Kafka's InvalidReplicaAssignmentException.
	{UnknownBroker, nil, kerr.InvalidReplicaAssignment},
	{BrokerFenced, nil, kerr.InvalidReplicaAssignment},
	// A request whose fields break the image's invariants (a negative
	// node id in a registration, an ISR without its leader).
	{InvalidRecord, nil, kerr.InvalidRequest},
	// No producer id block is left: Kafka's ProducerIdControlManager
	// throws UnknownServerException.
	{ProducerIDsExhausted, nil, kerr.UnknownServerError},

	// The partition logs (log).

	// A fetch, ListOffsets or DeleteRecords offset outside
	// [log start, log end].
	{log.ErrOffsetOutOfRange, nil, kerr.OffsetOutOfRange},
	// A follower's append whose offsets fall below its log end offset (or
	// a truncation point out of bounds, which no request names): Kafka's
	// UnexpectedAppendOffsetException, which is not an API exception.
	{log.ErrInvalidOffset, nil, kerr.UnknownServerError},
	// Data already on disk that fails its checks. It is the broker's
	// storage failing, not the client's message, so it is
	// KAFKA_STORAGE_ERROR (retriable: clients refresh their metadata and
	// may find another replica), as Kafka answers a failed log directory;
	// not CORRUPT_MESSAGE, which tells a producer that its own batch was
	// bad. Produce v3 and older, and Fetch versions before 56 existed,
	// get NOT_LEADER_OR_FOLLOWER instead (the answering API converts it,
	// as Kafka's ProduceResponse does).
	{log.ErrCorrupt, nil, kerr.KafkaStorageError},
	// A log that stopped accepting writes after an fsync failed: its
	// directory is offline until reopened, as Kafka's.
	{log.ErrLogFailed, nil, kerr.KafkaStorageError},
	// The log is closed: the replica is going away (shutdown, deletion,
	// reassignment). NOT_LEADER_OR_FOLLOWER sends clients to the metadata
	// for the partition's new home (docs/clients.md rule 6).
	{log.ErrClosed, nil, kerr.NotLeaderForPartition},
	// A batch larger than segment.bytes: Kafka's RecordBatchTooLarge,
	// RECORD_LIST_TOO_LARGE. (A batch over max.message.bytes is
	// MESSAGE_TOO_LARGE, checked by the partition, not by the log.)
	{log.ErrRecordTooLarge, nil, kerr.RecordListTooLarge},
	// A topic config value out of range.
	{log.ErrInvalidConfig, nil, kerr.InvalidConfig},

	// Produced batches (log/batch).

	// A batch of magic 0 or 1 in Produce v3+: Kafka >= 2.5 answers
	// INVALID_RECORD (KIP-467's InvalidRecordException; before it the
	// same check was a CorruptRecordException, CORRUPT_MESSAGE). The
	// message is not corrupt but of a format this broker refuses;
	// UNSUPPORTED_FOR_MESSAGE_FORMAT answers a request the log's message
	// format cannot express, not a batch.
	{batch.ErrUnsupportedMagic, nil, kerr.InvalidRecord},
	// A compressed records section that decompresses past the bound
	// (batch.MaxDecompressed; Kafka has none): MESSAGE_TOO_LARGE, on which
	// the Java producer splits a batch of several records and retries.
	// Before batch.ErrCorrupt, which such errors also wrap.
	{batch.ErrOverLimit, nil, kerr.MessageTooLarge},
	// A record without a key on a compacted topic: Kafka's
	// InvalidRecordException.
	{batch.ErrNoKey, nil, kerr.InvalidRecord},
	// A batch with a bad CRC, length or field, or one cut short:
	// CORRUPT_MESSAGE, as Kafka's CorruptRecordException.
	{batch.ErrCorrupt, nil, kerr.CorruptMessage},
	{batch.ErrTruncated, nil, kerr.CorruptMessage},

	// Waits.

	// A wait that ended first: the node or the controller stopping, as
	// Kafka's controller answers events it rejects while shutting down
	// ("The controller is shutting down.", a TimeoutException).
	{context.Canceled, nil, kerr.RequestTimedOut},
	// A wait past its deadline (an acks=all produce, a request timeout).
	{context.DeadlineExceeded, nil, kerr.RequestTimedOut},
}
