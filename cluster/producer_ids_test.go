package cluster

import (
	"context"
	"crypto/rand"
	"errors"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/weirmq/weir/cluster/config"
	"github.com/weirmq/weir/cluster/metadata"
)

// oneQuorum is a controller over one image, as the quorum leader is: it
// decides each request against the latest image and applies its records
// before the next.
type oneQuorum struct {
	mu   sync.Mutex
	img  *metadata.Image
	ctrl metadata.Controller
}

func (q *oneQuorum) ask(req metadata.Request) metadata.Result {
	q.mu.Lock()
	defer q.mu.Unlock()
	res, recs := q.ctrl.Evaluate(q.img, req)
	if len(recs) > 0 {
		b := metadata.NewBuilder(q.img)
		for _, r := range recs {
			if err := b.Apply(r, q.img.Offset()+1); err != nil {
				panic(err)
			}
		}
		q.img = b.Image()
	}
	return res
}

// allocator is node's producer-id block, filled by q.
func (q *oneQuorum) allocator(node int32, epoch int64) *producerIDs {
	return &producerIDs{ask: func(context.Context) (*metadata.AllocateProducerIDsResult, error) {
		return q.ask(&metadata.AllocateProducerIDsRequest{BrokerID: node, BrokerEpoch: epoch}).(*metadata.AllocateProducerIDsResult), nil
	}}
}

func twoBrokerQuorum(t *testing.T) *oneQuorum {
	t.Helper()
	img := metadata.Empty()
	var recs []metadata.Record
	for n := int32(1); n <= 2; n++ {
		regs, epoch, err := metadata.RegisterBrokerRecords(img, metadata.BrokerRegistrationRecord{
			NodeID: n, IncarnationID: metadata.UUID{byte(n)}, Host: "127.0.0.1", Port: 9092})
		if err != nil {
			t.Fatal(err)
		}
		recs = append(regs, metadata.BrokerUnfencedRecord{NodeID: n, BrokerEpoch: epoch})
		b := metadata.NewBuilder(img)
		for _, r := range recs {
			if err := b.Apply(r, img.Offset()+1); err != nil {
				t.Fatal(err)
			}
		}
		img = b.Image()
	}
	return &oneQuorum{img: img, ctrl: metadata.Controller{Config: config.NewBroker(), Rand: rand.Reader}}
}

// Two brokers taking ids concurrently from blocks the one quorum allocates
// never hand out the same id, over several blocks each.
func TestProducerIDsTwoBrokersNeverShare(t *testing.T) {
	q := twoBrokerQuorum(t)
	b1, _ := q.img.Broker(1)
	b2, _ := q.img.Broker(2)
	allocs := []*producerIDs{q.allocator(1, b1.Epoch), q.allocator(2, b2.Epoch)}
	const workers, each = 3, 700 // 2,100 ids per broker: three blocks each
	ids := make(chan int64, 2*workers*each)
	var wg sync.WaitGroup
	for _, a := range allocs {
		for range workers {
			wg.Go(func() {
				for range each {
					id, err := a.next(context.Background())
					if err != nil {
						t.Error(err)
						return
					}
					ids <- id
				}
			})
		}
	}
	wg.Wait()
	close(ids)
	seen := map[int64]bool{}
	for id := range ids {
		if seen[id] {
			t.Fatalf("id %d handed out twice", id)
		}
		seen[id] = true
	}
	if len(seen) != 2*workers*each {
		t.Fatalf("%d ids", len(seen))
	}
	if next := q.img.NextProducerID(); next != 6*metadata.DefaultProducerIDBlockSize {
		t.Fatalf("next producer id %d after 6 blocks", next)
	}
}

// A broker whose registration is stale gets the controller's refusal, as
// an APIError, and no id.
func TestProducerIDsStaleBrokerRefused(t *testing.T) {
	q := twoBrokerQuorum(t)
	b1, _ := q.img.Broker(1)
	_, err := q.allocator(1, b1.Epoch-1).next(context.Background())
	if e, ok := errors.AsType[metadata.APIError](err); !ok || e.Code != kerr.StaleBrokerEpoch.Code {
		t.Fatalf("stale broker: %v", err)
	}
}
