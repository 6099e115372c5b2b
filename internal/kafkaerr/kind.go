package kafkaerr

// Kind is an internal error condition of a package above log that the
// table maps to a Kafka error. Such a package makes its sentinel with New
// and a Kind; several sentinels may share one (metadata.ErrInvalidConfig
// and config.ErrInvalidConfig are both InvalidConfig).
//
// A Kind is an error, so errors.Is(err, UnknownTopic) reports whether err
// wraps a sentinel of that kind; it is never returned itself.
type Kind uint8

// The kinds. The comment of each names the sentinels of that kind.
const (
	_ Kind = iota

	// NodeFailed: cluster.ErrNodeFailed, a node whose metadata actor
	// stopped for good (whatever it wraps).
	NodeFailed
	// NotController: quorum.ErrNotLeader and quorum.ErrProposalDropped, a
	// proposal on (or lost by) a node that does not lead the quorum.
	NotController
	// LogUnavailable: metadata.ErrLogUnavailable and
	// quorum.ErrStorageUnavailable, the metadata log cannot be written now.
	LogUnavailable
	// OpTooLarge: metadata.ErrOpTooLarge.
	OpTooLarge

	// InvalidRecord: metadata.ErrInvalidRecord.
	InvalidRecord
	// InvalidTopic: metadata.ErrInvalidTopic.
	InvalidTopic
	// TopicExists: metadata.ErrTopicExists.
	TopicExists
	// UnknownTopic: metadata.ErrUnknownTopic.
	UnknownTopic
	// UnknownPartition: metadata.ErrUnknownPartition.
	UnknownPartition
	// InvalidPartitions: metadata.ErrInvalidPartitions.
	InvalidPartitions
	// InvalidReplicationFactor: metadata.ErrInvalidReplicationFactor.
	InvalidReplicationFactor
	// InvalidConfig: metadata.ErrInvalidConfig and config.ErrInvalidConfig
	// (log.ErrInvalidConfig has its own row).
	InvalidConfig
	// UnknownBroker: metadata.ErrUnknownBroker.
	UnknownBroker
	// StaleBrokerEpoch: metadata.ErrStaleBrokerEpoch.
	StaleBrokerEpoch
	// BrokerFenced: metadata.ErrBrokerFenced.
	BrokerFenced
	// StalePartitionEpoch: metadata.ErrStalePartitionEpoch.
	StalePartitionEpoch
	// FencedLeaderEpoch: metadata.ErrFencedLeaderEpoch.
	FencedLeaderEpoch
	// NotPartitionLeader: metadata.ErrNotLeader (of a partition, not of
	// the quorum).
	NotPartitionLeader
	// LeaderExists: metadata.ErrLeaderExists.
	LeaderExists
	// IneligibleReplica: metadata.ErrIneligibleReplica.
	IneligibleReplica
	// ProducerIDsExhausted: metadata.ErrProducerIDsExhausted.
	ProducerIDsExhausted

	numKinds
)

var kindNames = [numKinds]string{
	NodeFailed:               "node failed",
	NotController:            "not the controller",
	LogUnavailable:           "metadata log unavailable",
	OpTooLarge:               "operation too large",
	InvalidRecord:            "invalid record",
	InvalidTopic:             "invalid topic",
	TopicExists:              "topic exists",
	UnknownTopic:             "unknown topic",
	UnknownPartition:         "unknown partition",
	InvalidPartitions:        "invalid partitions",
	InvalidReplicationFactor: "invalid replication factor",
	InvalidConfig:            "invalid config",
	UnknownBroker:            "unknown broker",
	StaleBrokerEpoch:         "stale broker epoch",
	BrokerFenced:             "broker fenced",
	StalePartitionEpoch:      "stale partition epoch",
	FencedLeaderEpoch:        "fenced leader epoch",
	NotPartitionLeader:       "not the partition leader",
	LeaderExists:             "leader exists",
	IneligibleReplica:        "ineligible replica",
	ProducerIDsExhausted:     "producer ids exhausted",
}

// String returns the kind's name.
func (k Kind) String() string {
	if k == 0 || k >= numKinds {
		return "unknown kind"
	}
	return kindNames[k]
}

// Error implements error: the kind's name.
func (k Kind) Error() string { return "kafkaerr: " + k.String() }

// sentinel is an error made by New.
type sentinel struct {
	kind Kind
	text string
}

func (s *sentinel) Error() string { return s.text }

// Is reports whether target is s's kind (errors.Is compares s itself by
// identity first).
func (s *sentinel) Is(target error) bool {
	k, ok := target.(Kind)
	return ok && k == s.kind
}

// New returns a sentinel error with text, of kind k. Like one made by
// errors.New it is distinct from every other error, and errors.Is matches
// it, or an error wrapping it, against itself; errors.Is also matches it
// against k.
func New(k Kind, text string) error { return &sentinel{kind: k, text: text} }
