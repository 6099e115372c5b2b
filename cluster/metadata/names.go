package metadata

import (
	"fmt"
	"strings"
)

// Topic names Kafka gives a meaning to.
const (
	// ConsumerOffsetsTopic holds committed offsets and group metadata.
	ConsumerOffsetsTopic = "__consumer_offsets"
	// TransactionStateTopic holds the transaction coordinators' state.
	TransactionStateTopic = "__transaction_state"
	// MetadataTopic is the name of the metadata log; no topic may use it.
	MetadataTopic = "__cluster_metadata"
)

// MaxTopicNameLength is Kafka's limit on topic names.
const MaxTopicNameLength = 249

// ValidateTopicName checks a topic name by Kafka's rules: 1 to 249
// characters from [a-zA-Z0-9._-], neither "." nor "..". The metadata log's
// name is reserved too. Errors wrap ErrInvalidTopic.
func ValidateTopicName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: topic name is illegal, it can't be empty", ErrInvalidTopic)
	case name == "." || name == "..":
		return fmt.Errorf("%w: topic name cannot be \".\" or \"..\"", ErrInvalidTopic)
	case len(name) > MaxTopicNameLength:
		return fmt.Errorf("%w: topic name is illegal, it can't be longer than %d characters, topic name: %.40q...",
			ErrInvalidTopic, MaxTopicNameLength, name)
	case name == MetadataTopic:
		return fmt.Errorf("%w: topic name %q is reserved for the metadata log", ErrInvalidTopic, name)
	}
	for i := 0; i < len(name); i++ {
		if !legalTopicByte(name[i]) {
			return fmt.Errorf("%w: topic name %q is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'",
				ErrInvalidTopic, name)
		}
	}
	return nil
}

func legalTopicByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '.' || c == '_' || c == '-'
}

// IsInternalTopic reports whether name is one of Kafka's internal topics.
func IsInternalTopic(name string) bool {
	return name == ConsumerOffsetsTopic || name == TransactionStateTopic
}

// collisionKey maps names that Kafka considers colliding (they differ
// only in '.' versus '_', which metric names cannot tell apart) to one key.
func collisionKey(name string) string {
	return strings.ReplaceAll(name, ".", "_")
}
