package metadata

import (
	"fmt"
	"math"
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
