package metadata

import (
	"fmt"

	"github.com/weirmq/weir/internal/kafkaerr"
)

// The bounds of one metadata operation: the records one proposal (one raft
// entry, one batch of the metadata log) may hold. Kafka's controller caps
// the records of a user operation at MAX_RECORDS_PER_USER_OP (10000, its
// MAX_RECORDS_PER_BATCH) and refuses a larger one with POLICY_VIOLATION
// ("Unable to perform excessively large batch operation."); KRaft also
// refuses an atomic batch over 8 MiB. weir bounds the count the same way
// and the encoded bytes by MaxOpBytes, half the metadata log's 8 MiB
// segment, so that an entry (its records plus the batch framing, at most a
// few bytes a record) always fits one segment, whatever names and config
// values a request carries.
const (
	// MaxRecordsPerOp is Kafka's MAX_RECORDS_PER_USER_OP.
	MaxRecordsPerOp = 10000
	// MaxOpBytes bounds the EncodeRecord bytes of one operation, each
	// counted with its length prefix (what a raft entry's data holds).
	MaxOpBytes = 4 << 20
)

// ErrOpTooLarge is an operation over MaxRecordsPerOp records or MaxOpBytes
// bytes: it is refused as a whole (POLICY_VIOLATION, as Kafka's
// BoundedListTooLongException).
var ErrOpTooLarge = kafkaerr.New(kafkaerr.OpTooLarge, "metadata: operation too large")

// OpBudget counts the records and bytes of one operation against
// MaxRecordsPerOp and MaxOpBytes. The zero value is an empty operation.
type OpBudget struct {
	Records int
	Bytes   int
}

// Add counts recs if they fit what is left and reports whether they did;
// records that do not fit are not counted (the caller leaves them for a
// later operation). A record that cannot be encoded does not fit.
func (b *OpBudget) Add(recs []Record) bool {
	n, size := len(recs), 0
	for _, r := range recs {
		s, err := EncodedSize(r)
		if err != nil {
			return false
		}
		size += s
	}
	if b.Records+n > MaxRecordsPerOp || b.Bytes+size > MaxOpBytes {
		return false
	}
	b.Records += n
	b.Bytes += size
	return true
}

// CheckOp returns an error wrapping ErrOpTooLarge when recs exceed the
// bounds of one operation.
func CheckOp(recs []Record) error {
	size := 0
	for _, r := range recs {
		s, err := EncodedSize(r)
		if err != nil {
			return err
		}
		size += s
	}
	if len(recs) > MaxRecordsPerOp || size > MaxOpBytes {
		return fmt.Errorf("%w: %d records of %d bytes (at most %d records, %d bytes)",
			ErrOpTooLarge, len(recs), size, MaxRecordsPerOp, MaxOpBytes)
	}
	return nil
}

// EncodedSize is the bytes r takes in a raft entry: its EncodeRecord bytes
// and their uvarint length prefix.
func EncodedSize(r Record) (int, error) {
	b, err := EncodeRecord(r)
	if err != nil {
		return 0, err
	}
	n := len(b)
	prefix := 1
	for v := n >> 7; v > 0; v >>= 7 {
		prefix++
	}
	return n + prefix, nil
}
