package metadata

import (
	"encoding/base64"
	"fmt"
)

// UUID is Kafka's Uuid: 16 bytes, written as 22 characters of URL-safe
// base64 without padding. Topic ids, broker incarnation ids and the cluster
// id are UUIDs. The zero UUID means "none" and is never a valid id.
type UUID [16]byte

// MetadataTopicID is the id Kafka reserves for the __cluster_metadata
// topic (Uuid 0,1). No user topic may have it.
var MetadataTopicID = UUID{15: 1}

// IsZero reports whether u is the zero UUID.
func (u UUID) IsZero() bool { return u == UUID{} }

// String returns u in Kafka's text form (22 characters of URL-safe base64).
func (u UUID) String() string { return base64.RawURLEncoding.EncodeToString(u[:]) }

// ParseUUID parses Kafka's text form of a UUID. Like Kafka, it accepts
// stray bits in the last character (the documentation's sample cluster id
// "MkU3OEVBNTcwNTJENDM2Qk" has them).
func ParseUUID(s string) (UUID, error) {
	var u UUID
	if len(s) != 22 {
		return u, fmt.Errorf("metadata: uuid %q: want 22 characters, got %d", s, len(s))
	}
	n, err := base64.RawURLEncoding.Decode(u[:], []byte(s))
	if err != nil || n != len(u) {
		return UUID{}, fmt.Errorf("metadata: uuid %q: not URL-safe base64 of 16 bytes", s)
	}
	return u, nil
}

// ValidateClusterID checks that id is a cluster id as Kafka writes them: a
// non-zero UUID in text form (what `kafka-storage random-uuid` prints).
func ValidateClusterID(id string) error {
	u, err := ParseUUID(id)
	if err != nil {
		return fmt.Errorf("cluster id: %w", err)
	}
	if u.IsZero() {
		return fmt.Errorf("cluster id %q is the zero uuid", id)
	}
	return nil
}
