package wire

// InitProducerId (key 22), versions 0-4.
//
// v0 is KIP-98 (librdkafka 2.0.2 requires v0 to be advertised before it
// enables idempotence: docs/clients.md rule 2). v1 throttle time. v2
// flexible (KIP-482). v3 producer_id/producer_epoch for KIP-360 recovery.
// v4 PRODUCER_FENCED (KIP-588). v5 (KIP-890) and v6 (2PC) are not served.
//
// An idempotent producer (null transactional_id) gets a fresh producer id
// with epoch 0 at every call, as Kafka's TransactionCoordinator answers it
// ("always blindly accept the request"): the id/epoch a v3+ request carries
// is only checked to be both set or both unset (INVALID_REQUEST
// otherwise), because an idempotent producer bumps its epoch itself and
// asks for a new id when the epoch would overflow. Ids come from a block
// of metadata.DefaultProducerIDBlockSize ids that this broker takes from
// the metadata log (AllocateProducerIDs) when its current block runs out,
// so no id is ever handed out twice, across restarts too. Until a block is
// applied the request gets COORDINATOR_LOAD_IN_PROGRESS (retriable), as a
// Kafka broker waiting for its block answers.
//
// Transactions are not served yet: a transactional_id gets
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED, the fatal code FindCoordinator
// gives it too (10_findcoordinator.go), for a client that sends
// InitProducerId without looking the coordinator up (the response has no
// error message); an empty one gets INVALID_REQUEST as in Kafka.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/cluster/metadata"
)

// producerIDWait bounds the wait for a new producer id block to apply.
const producerIDWait = 5 * time.Second

// producerIDBlock is the block of producer ids this broker hands out. The
// zero value is an empty block; the first request fetches one.
type producerIDBlock struct {
	mu        sync.Mutex
	next, end int64 // ids next..end-1 are free
	// refilling is closed when the refill in flight ends; nil when none is.
	refilling chan struct{}
}

// take returns the next free id of the block, if there is one.
func (b *producerIDBlock) take() (int64, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.next >= b.end {
		return 0, false
	}
	id := b.next
	b.next++
	return id, true
}

// refill takes a new block from the metadata log, or waits for the refill
// another request started, then takes an id from the block. Only one
// proposal is in flight at a time.
func (b *producerIDBlock) refill(ctx context.Context, broker Broker) (int64, error) {
	for {
		if id, ok := b.take(); ok {
			return id, nil
		}
		b.mu.Lock()
		if wait := b.refilling; wait != nil {
			b.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		}
		done := make(chan struct{})
		b.refilling = done
		b.mu.Unlock()
		first, size, err := allocateProducerIDs(ctx, broker)
		b.mu.Lock()
		if err == nil {
			b.next, b.end = first, first+size
		}
		b.refilling = nil
		close(done)
		b.mu.Unlock()
		if err != nil {
			return 0, err
		}
	}
}

// allocateProducerIDs proposes a new block for this broker and returns it
// once applied.
func allocateProducerIDs(ctx context.Context, broker Broker) (int64, int64, error) {
	ctx, cancel := context.WithTimeout(ctx, producerIDWait)
	defer cancel()
	var block metadata.ProducerIDsBlockRecord
	_, err := broker.Propose(ctx, func(img *metadata.Image) ([]metadata.Record, error) {
		rec, err := metadata.AllocateProducerIDs(img, broker.NodeID(), broker.BrokerEpoch(), metadata.DefaultProducerIDBlockSize)
		if err != nil {
			return nil, err
		}
		block = rec.(metadata.ProducerIDsBlockRecord)
		return []metadata.Record{rec}, nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("allocate a producer id block: %w", err)
	}
	return block.FirstProducerID, block.Size, nil
}

func (h *BrokerHandler) handleInitProducerID(ctx context.Context, req *Request) Response {
	r := req.Body.(*kmsg.InitProducerIDRequest)
	resp := r.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	switch {
	case r.TransactionalID != nil && *r.TransactionalID == "":
		resp.ErrorCode = kerr.InvalidRequest.Code
		h.log.Info("init producer id refused", "client", req.ClientID, "reason", "empty transactional id")
		return Reply(resp)
	case r.TransactionalID != nil:
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
		h.log.Info("init producer id refused", "client", req.ClientID, "reason", "transactions are not supported yet",
			"transactional_id", *r.TransactionalID)
		return Reply(resp)
	case (r.ProducerID == -1) != (r.ProducerEpoch == -1):
		resp.ErrorCode = kerr.InvalidRequest.Code
		h.log.Info("init producer id refused", "client", req.ClientID, "reason", "producer id and epoch must both be set or both be -1",
			"producer_id", r.ProducerID, "producer_epoch", r.ProducerEpoch)
		return Reply(resp)
	}
	if id, ok := h.apis.producerIDs.take(); ok {
		resp.ProducerID, resp.ProducerEpoch = id, 0
		return Reply(resp)
	}
	return Defer(func(ctx context.Context) Response {
		id, err := h.apis.producerIDs.refill(ctx, h.broker)
		if err != nil {
			h.log.Info("init producer id: no producer id block", "client", req.ClientID, "err", err)
			resp.ErrorCode = kerr.CoordinatorLoadInProgress.Code
			if errors.Is(err, metadata.ErrProducerIDsExhausted) {
				resp.ErrorCode = kerr.UnknownServerError.Code
			}
			return Reply(resp)
		}
		resp.ProducerID, resp.ProducerEpoch = id, 0
		return Reply(resp)
	})
}
