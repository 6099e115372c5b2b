package cluster

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/weirmq/weir/cluster/metadata"
)

// producerIDWait bounds the wait for a new producer id block to apply.
const producerIDWait = 5 * time.Second

// producerIDs is the block of producer ids a node hands out (Kafka's
// RPCProducerIdManager): ids come from a block of
// metadata.DefaultProducerIDBlockSize ids that the controller allocates
// to this broker in the metadata log, evaluated against the controller's
// own image, so no two brokers (and no two processes of one) ever hand
// out the same id. The zero value with ask set is ready; the first call
// fetches a block.
type producerIDs struct {
	// ask sends an AllocateProducerIDsRequest to the controller.
	ask func(ctx context.Context) (*metadata.AllocateProducerIDsResult, error)

	mu    sync.Mutex
	block metadata.ProducerIDBlock
	// refilling is closed when the refill in flight ends; nil when none is.
	refilling chan struct{}
}

// next returns the next free id, asking for a new block when the block
// runs out, or waiting for the refill another caller started: one request
// for a block is in flight at a time. The error is the controller's
// refusal (a metadata.APIError) or the wait's.
func (p *producerIDs) next(ctx context.Context) (int64, error) {
	for {
		p.mu.Lock()
		if id, ok := p.block.Take(); ok {
			p.mu.Unlock()
			return id, nil
		}
		if wait := p.refilling; wait != nil {
			p.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		}
		done := make(chan struct{})
		p.refilling = done
		p.mu.Unlock()
		res, err := p.ask(ctx)
		p.mu.Lock()
		if err == nil {
			err = p.block.Fill(res)
		}
		p.refilling = nil
		close(done)
		p.mu.Unlock()
		if err != nil {
			return 0, fmt.Errorf("allocate a producer id block: %w", err)
		}
	}
}

// allocateProducerIDs asks the controller for a block for this broker.
func (n *Node) allocateProducerIDs(ctx context.Context) (*metadata.AllocateProducerIDsResult, error) {
	ctx, cancel := context.WithTimeout(ctx, producerIDWait)
	defer cancel()
	res, err := n.Metadata(ctx, &metadata.AllocateProducerIDsRequest{BrokerID: n.id, BrokerEpoch: n.BrokerEpoch()})
	if err != nil {
		return nil, err
	}
	return res.(*metadata.AllocateProducerIDsResult), nil
}
