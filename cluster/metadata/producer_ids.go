package metadata

import (
	"fmt"
	"math"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/internal/kafkaerr"
)

// DefaultProducerIDBlockSize is the number of producer ids a broker gets
// per block, as in Kafka.
const DefaultProducerIDBlockSize = 1000

func (b *Builder) applyProducerIDsBlock(r ProducerIDsBlockRecord) error {
	if r.BrokerID < -1 {
		return invalid("broker id %d", r.BrokerID)
	}
	if r.FirstProducerID != b.img.nextProducerID {
		return invalid("block starts at %d, the next producer id is %d", r.FirstProducerID, b.img.nextProducerID)
	}
	if r.Size <= 0 || r.FirstProducerID > math.MaxInt64-r.Size {
		return invalid("block size %d", r.Size)
	}
	b.img.nextProducerID = r.FirstProducerID + r.Size
	return nil
}

// AllocateProducerIDs returns the record that gives broker, registered with
// epoch, the next blockSize producer ids. The broker epoch must be current
// (ErrUnknownBroker, ErrStaleBrokerEpoch); ErrProducerIDsExhausted when the
// ids run out.
func AllocateProducerIDs(img *Image, broker int32, epoch int64, blockSize int64) (Record, error) {
	if _, err := img.currentBroker(broker, epoch); err != nil {
		return nil, fmt.Errorf("allocate producer ids: %w", err)
	}
	if blockSize <= 0 {
		return nil, fmt.Errorf("allocate producer ids: %w: block size %d", ErrInvalidRecord, blockSize)
	}
	next := img.nextProducerID
	if next > math.MaxInt64-blockSize {
		return nil, fmt.Errorf("allocate %d producer ids from %d: %w", blockSize, next, ErrProducerIDsExhausted)
	}
	return ProducerIDsBlockRecord{
		BrokerID:        broker,
		BrokerEpoch:     epoch,
		FirstProducerID: next,
		Size:            blockSize,
	}, nil
}

// allocateProducerIDs decides an AllocateProducerIDsRequest: the next
// DefaultProducerIDBlockSize ids for a broker whose registration is
// current (else STALE_BROKER_EPOCH, or BROKER_ID_NOT_REGISTERED for an
// unregistered one: internal/kafkaerr's table); UNKNOWN_SERVER_ERROR once
// the ids run out, as Kafka's ProducerIdControlManager.
func allocateProducerIDs(img *Image, r *AllocateProducerIDsRequest) (*AllocateProducerIDsResult, []Record) {
	rec, err := AllocateProducerIDs(img, r.BrokerID, r.BrokerEpoch, DefaultProducerIDBlockSize)
	if err != nil {
		return &AllocateProducerIDsResult{Error: APIError{Code: kafkaerr.OfAPI(kmsg.AllocateProducerIDs, err).Code, Message: err.Error()}}, nil
	}
	block := rec.(ProducerIDsBlockRecord)
	return &AllocateProducerIDsResult{FirstProducerID: block.FirstProducerID, Size: block.Size}, []Record{rec}
}

// ProducerIDBlock is the block of producer ids a broker hands out, ids
// Next..End-1 still free. The zero value is empty. It is not safe for
// concurrent use.
type ProducerIDBlock struct {
	Next, End int64
}

// Take returns the next free id of the block, if there is one.
func (b *ProducerIDBlock) Take() (int64, bool) {
	if b.Next >= b.End {
		return 0, false
	}
	id := b.Next
	b.Next++
	return id, true
}

// Fill replaces the block with the one r gives, or returns r's error.
func (b *ProducerIDBlock) Fill(r *AllocateProducerIDsResult) error {
	if r.Error.Failed() {
		return r.Error
	}
	b.Next, b.End = r.FirstProducerID, r.FirstProducerID+r.Size
	return nil
}
