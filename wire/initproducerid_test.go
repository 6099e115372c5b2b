package wire

import (
	"context"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/cluster/metadata"
)

func initPIDReq(v int16) *kmsg.InitProducerIDRequest {
	req := kmsg.NewPtrInitProducerIDRequest()
	req.Version, req.TransactionTimeoutMillis = v, 60000
	return req
}

// Every version hands out ids with epoch 0; the ids are unique and
// increasing across a block boundary, and each block is in the metadata
// log.
func TestInitProducerIDUniqueAcrossBlocks(t *testing.T) {
	s, b := startBroker(t, nil)
	c := dial(t, s)
	last := int64(-1)
	n := int(metadata.DefaultProducerIDBlockSize) + 10
	for i := range n {
		v := int16(i % 5)
		resp := roundTrip[*kmsg.InitProducerIDResponse](c, initPIDReq(v))
		wantCode(t, "init producer id", resp.ErrorCode, nil)
		if resp.ProducerID <= last || resp.ProducerEpoch != 0 {
			t.Fatalf("call %d (v%d): id %d epoch %d after %d", i, v, resp.ProducerID, resp.ProducerEpoch, last)
		}
		last = resp.ProducerID
	}
	if got := b.Image().NextProducerID(); got != 2*metadata.DefaultProducerIDBlockSize || last >= got {
		t.Fatalf("next producer id in the image %d, last handed out %d", got, last)
	}
}

// A restarted broker (a new handler over a broker whose block is gone)
// never reuses the ids of the blocks in the log; concurrent requests get
// distinct ids.
func TestInitProducerIDConcurrentAndRestart(t *testing.T) {
	s, b := startBroker(t, nil)
	const workers, each = 4, 300
	ids := make(chan int64, workers*each)
	var wg sync.WaitGroup
	for range workers {
		c := dial(t, s)
		wg.Go(func() {
			for range each {
				req := initPIDReq(4)
				c.send(req, 1)
				resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
				if corr := c.recv(resp); corr != 1 || resp.ErrorCode != 0 {
					t.Errorf("corr %d error %d", corr, resp.ErrorCode)
					return
				}
				ids <- resp.ProducerID
			}
		})
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
	b.mu.Lock()
	b.pids = metadata.ProducerIDBlock{} // the restarted process has no block
	b.mu.Unlock()
	h, err := NewBrokerHandler(BrokerHandlerConfig{Broker: b, System: b.system})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	resp := h.Handle(context.Background(), &Request{Key: 22, Version: 4, Body: initPIDReq(4)})
	if resp.kind == kindDefer {
		resp = resp.later(context.Background())
	}
	got := resp.body.(*kmsg.InitProducerIDResponse)
	if got.ErrorCode != 0 || seen[got.ProducerID] || got.ProducerID < 2*metadata.DefaultProducerIDBlockSize {
		t.Fatalf("after restart: id %d error %d", got.ProducerID, got.ErrorCode)
	}
}

// Transactions are not served: a transactional id fails clearly; an empty
// one and a half-set KIP-360 id/epoch are invalid; a full id/epoch gets a
// new id (the client bumps epochs itself, as with Kafka).
func TestInitProducerIDBadInput(t *testing.T) {
	s, _ := startBroker(t, nil)
	c := dial(t, s)
	for v := int16(0); v <= 4; v++ {
		req := initPIDReq(v)
		req.TransactionalID = kmsg.StringPtr("txn")
		resp := roundTrip[*kmsg.InitProducerIDResponse](c, req)
		wantCode(t, "transactional", resp.ErrorCode, kerr.TransactionalIDAuthorizationFailed)
		if resp.ProducerID != -1 || resp.ProducerEpoch != -1 {
			t.Fatalf("v%d: id %d epoch %d on error", v, resp.ProducerID, resp.ProducerEpoch)
		}
		req.TransactionalID = kmsg.StringPtr("")
		wantCode(t, "empty transactional id", roundTrip[*kmsg.InitProducerIDResponse](c, req).ErrorCode, kerr.InvalidRequest)
	}
	first := roundTrip[*kmsg.InitProducerIDResponse](c, initPIDReq(4))
	for _, pe := range []struct {
		id    int64
		epoch int16
		want  *kerr.Error
	}{{first.ProducerID, -1, kerr.InvalidRequest}, {-1, 0, kerr.InvalidRequest}, {first.ProducerID, 5, nil}} {
		req := initPIDReq(3)
		req.ProducerID, req.ProducerEpoch = pe.id, pe.epoch
		resp := roundTrip[*kmsg.InitProducerIDResponse](c, req)
		wantCode(t, "kip-360", resp.ErrorCode, pe.want)
		if pe.want == nil && (resp.ProducerID <= first.ProducerID || resp.ProducerEpoch != 0) {
			t.Fatalf("recovery: id %d epoch %d", resp.ProducerID, resp.ProducerEpoch)
		}
	}
}
