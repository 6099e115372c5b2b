package wire

// Produce (key 0), advertised 0-11, served 3-11.
//
// v0-2 (message formats v0/v1) are advertised only because librdkafka <
// 2.11.1 compresses only when the Produce range includes v0
// (docs/clients.md rule 1, KAFKA-18659); they are answered
// UNSUPPORTED_VERSION per partition by the row's Unserved hook. v3 message
// format v2 only, exactly one batch per partition, transactional id (KIP-98).
// v4 may answer KAFKA_STORAGE_ERROR (older versions get
// NOT_LEADER_OR_FOLLOWER instead). v5 log_start_offset (KIP-107). v7 zstd
// (KIP-110; zstd batches on v3-6 get UNSUPPORTED_COMPRESSION_TYPE). v8
// error_records and error_message (KIP-467). v9 flexible (KIP-482). v10
// current_leader and node_endpoints on NOT_LEADER_OR_FOLLOWER (KIP-951).
// v11 same as v10 (KIP-890 part 1 client behaviour). v12+ (KIP-890 part 2)
// and v13 (topic ids) are not served.
//
// Handle sends every partition's AppendBatches to its partition actor in
// request order (pipelined idempotent produces on one connection reach the
// actor in order) and the Defer waits for the answers. acks=0 gets no
// response on success and a closed connection on any error
// (docs/clients.md rule 7).
// Internal topics (__consumer_offsets) get INVALID_TOPIC_EXCEPTION, as in
// Kafka: only their coordinators write there.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/actors/partition"
	"github.com/weirmq/weir/cluster/metadata"
	"github.com/weirmq/weir/log/batch"
)

// produceBackstop bounds the wait for a partition actor's answer beyond the
// request's timeout: the actor always answers (acks=all times out on its
// ticks), so this only fires when something is broken.
const produceBackstop = 30 * time.Second

// errProduceFailed closes an acks=0 connection (docs/clients.md rule 7).
var errProduceFailed = errors.New("wire: acks=0 produce failed")

// unservedProduce answers Produce v0-2: UNSUPPORTED_VERSION on every
// partition, as Kafka 4.0 does (KAFKA-18659).
func unservedProduce(req *Request) Response {
	r := req.Body.(*kmsg.ProduceRequest)
	if r.Acks == 0 {
		return CloseConnection(fmt.Errorf("%w: Produce v%d is not served", errUnsupportedVersion, req.Version))
	}
	resp := r.ResponseKind().(*kmsg.ProduceResponse)
	for _, t := range r.Topics {
		rt := kmsg.NewProduceResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := newProducePartition(p.Partition)
			rp.ErrorCode = kerr.UnsupportedVersion.Code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return Reply(resp)
}

// newProducePartition is a partition answer with Kafka's "unknown" values.
func newProducePartition(idx int32) kmsg.ProduceResponseTopicPartition {
	rp := kmsg.NewProduceResponseTopicPartition()
	rp.Partition = idx
	rp.BaseOffset, rp.LogAppendTime, rp.LogStartOffset = -1, -1, -1
	rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = -1, -1
	return rp
}

// localReplica finds a partition's metadata and the local replica's actor:
// UNKNOWN_TOPIC_OR_PARTITION when the image lacks it, and
// NOT_LEADER_OR_FOLLOWER when this node hosts no replica (with the image's
// partition state for the leader hint).
func (h *BrokerHandler) localReplica(img *metadata.Image, topic string, idx int32) (*partition.Client, metadata.Partition, int16) {
	t, ok := img.Topic(topic)
	if !ok {
		return nil, metadata.Partition{}, kerr.UnknownTopicOrPartition.Code
	}
	p, ok := t.Partition(idx)
	if !ok {
		return nil, metadata.Partition{}, kerr.UnknownTopicOrPartition.Code
	}
	c := h.broker.Replica(t.ID(), idx)
	if c == nil {
		return nil, p, kerr.NotLeaderForPartition.Code
	}
	return c, p, 0
}

// produceSlot is one partition of a Produce request waiting for its actor.
type produceSlot struct {
	part *kmsg.ProduceResponseTopicPartition
}

// handleProduce serves Produce v3-11.
func (h *BrokerHandler) handleProduce(ctx context.Context, req *Request) Response {
	r := req.Body.(*kmsg.ProduceRequest)
	resp := r.ResponseKind().(*kmsg.ProduceResponse)
	img := h.broker.Image()
	validAcks := r.Acks == 0 || r.Acks == 1 || r.Acks == -1
	var inbox *partition.Inbox
	slots := map[uint64]produceSlot{}
	resp.Topics = make([]kmsg.ProduceResponseTopic, len(r.Topics))
	for ti, t := range r.Topics {
		rt := &resp.Topics[ti]
		rt.Default()
		rt.Topic = t.Topic
		rt.Partitions = make([]kmsg.ProduceResponseTopicPartition, len(t.Partitions))
		for pi, p := range t.Partitions {
			rp := &rt.Partitions[pi]
			*rp = newProducePartition(p.Partition)
			c, meta, code := h.localReplica(img, t.Topic, p.Partition)
			switch {
			case metadata.IsInternalTopic(t.Topic):
				// Only the coordinators write there, through the partition
				// actor; a client's records would corrupt their state
				// (Kafka: "Cannot append to internal topic").
				code = kerr.InvalidTopicException.Code
			case code == kerr.NotLeaderForPartition.Code:
				rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = meta.Leader, meta.LeaderEpoch
			case code != 0:
			case !h.broker.LeaseValid():
				// The lease lapsed (docs/DESIGN.md "Leader lease"): another node may
				// lead by now, so no write is acknowledged here.
				code = kerr.NotLeaderForPartition.Code
			case !validAcks:
				code = kerr.InvalidRequiredAcks.Code
			case r.Version < 7 && isZstd(p.Records):
				code = kerr.UnsupportedCompressionType.Code
			}
			if code != 0 {
				rp.ErrorCode = code
				continue
			}
			if inbox == nil {
				inbox = partition.NewInbox(h.cfg.System)
			}
			id := inbox.NextID()
			slots[id] = produceSlot{part: rp}
			// An image naming this node leader lets the append wait for a
			// replica that has not applied the election yet (partition's
			// early.go).
			self := meta.Leader == h.broker.NodeID()
			c.SendAppend(&partition.AppendBatches{ID: id, Records: p.Records, Acks: r.Acks, TimeoutMs: r.TimeoutMillis,
				AwaitLeader: self, AwaitLeaderEpoch: meta.LeaderEpoch}, inbox.PID())
		}
	}
	if inbox == nil {
		stale := h.staleHints(r, img, resp)
		if len(stale) == 0 {
			return h.finishProduce(req, r, resp, img)
		}
		return Defer(func(ctx context.Context) Response {
			return h.finishProduce(req, r, resp, h.awaitNewLeaders(ctx, stale))
		})
	}
	return Defer(func(ctx context.Context) Response {
		defer inbox.Close()
		if h.awaitAppends(ctx, r, inbox, slots) {
			// Every actor answered, so none holds the records any more.
			req.ReleaseFrame()
		}
		img := h.broker.Image()
		if stale := h.staleHints(r, img, resp); len(stale) > 0 {
			img = h.awaitNewLeaders(ctx, stale)
		}
		return h.finishProduce(req, r, resp, img)
	})
}

// staleHints returns the partitions of resp whose answer waits for a new
// leader (produce_elections.go); none for acks=0, which gets no answer.
func (h *BrokerHandler) staleHints(r *kmsg.ProduceRequest, img *metadata.Image, resp *kmsg.ProduceResponse) []staleHint {
	if r.Acks == 0 {
		return nil
	}
	return staleHints(img, resp, memoDown(h.broker.PeerDown))
}

// isZstd reports whether records is a v2 batch compressed with zstd.
func isZstd(records []byte) bool {
	return len(records) >= batch.HeaderSize && records[16] == batch.CurrentMagic &&
		batch.Attributes(records)&0x07 == batch.CodecZstd
}

// awaitAppends collects the actors' answers into the slots. An actor that
// is gone answers NOT_LEADER_OR_FOLLOWER; one that does not answer before
// the request's timeout (plus a backstop) REQUEST_TIMED_OUT. It reports
// whether every actor answered (or is gone): then no actor can still read
// the request's records.
func (h *BrokerHandler) awaitAppends(ctx context.Context, r *kmsg.ProduceRequest, inbox *partition.Inbox, slots map[uint64]produceSlot) bool {
	wait := produceBackstop
	if r.Acks == -1 {
		wait = time.Duration(max(r.TimeoutMillis, 0))*time.Millisecond + time.Second
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	pending, gone := len(slots), 0
	for pending > 0 {
		m, err := inbox.Receive(wctx)
		if err != nil {
			break
		}
		switch m := m.(type) {
		case *partition.AppendBatchesResult:
			s, ok := slots[m.ID]
			if !ok {
				continue
			}
			delete(slots, m.ID)
			pending--
			fillProducePartition(s.part, m)
		case *actor.DeadLetterResponse:
			pending--
			gone++
		}
	}
	answered := pending == 0
	for _, s := range slots {
		if gone > 0 {
			s.part.ErrorCode = kerr.NotLeaderForPartition.Code
			gone--
			continue
		}
		s.part.ErrorCode = kerr.RequestTimedOut.Code
	}
	return answered
}

// fillProducePartition copies an actor's answer into the response.
func fillProducePartition(rp *kmsg.ProduceResponseTopicPartition, m *partition.AppendBatchesResult) {
	rp.ErrorCode = m.ErrorCode
	rp.BaseOffset, rp.LogAppendTime, rp.LogStartOffset = m.BaseOffset, m.LogAppendTimeMs, m.LogStartOffset
	if m.ErrorCode != 0 && m.ErrorMessage != "" {
		msg := m.ErrorMessage
		rp.ErrorMessage = &msg
	}
	if m.ErrorCode == kerr.NotLeaderForPartition.Code {
		rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = m.CurrentLeader.LeaderID, m.CurrentLeader.LeaderEpoch
	}
}

// finishProduce turns the filled response into the answer: codes the
// version cannot express are downgraded, KIP-951 endpoints added, and an
// acks=0 request gets nothing or, after any error, a closed connection.
func (h *BrokerHandler) finishProduce(req *Request, r *kmsg.ProduceRequest, resp *kmsg.ProduceResponse, img *metadata.Image) Response {
	var failed []string
	retriableOnly := true
	leaders := map[int32]bool{}
	for ti := range resp.Topics {
		for pi := range resp.Topics[ti].Partitions {
			rp := &resp.Topics[ti].Partitions[pi]
			if rp.ErrorCode == kerr.KafkaStorageError.Code && r.Version < 4 {
				rp.ErrorCode = kerr.NotLeaderForPartition.Code
			}
			if rp.ErrorCode == 0 {
				continue
			}
			failed = append(failed, fmt.Sprintf("%s-%d: %s", resp.Topics[ti].Topic, rp.Partition, kerr.ErrorForCode(rp.ErrorCode)))
			retriableOnly = retriableOnly && kerr.IsRetriable(kerr.ErrorForCode(rp.ErrorCode))
			if rp.ErrorCode == kerr.NotLeaderForPartition.Code && rp.CurrentLeader.LeaderID >= 0 && rp.CurrentLeader.LeaderEpoch >= 0 {
				leaders[rp.CurrentLeader.LeaderID] = true
			}
		}
	}
	if r.Acks == 0 {
		if len(failed) > 0 {
			return CloseConnection(fmt.Errorf("%w: %d partitions: %v", errProduceFailed, len(failed), boundedList(failed)))
		}
		return NoResponse()
	}
	if len(failed) > 0 {
		// One line per request; retriable codes (a moved leader) at Debug.
		level := slog.LevelDebug
		if !retriableOnly {
			level = slog.LevelInfo
		}
		h.log.Log(context.Background(), level, "wire: produce errors", "conn", req.Conn.ID, "client_id", req.ClientID, "count", len(failed), "partitions", boundedList(failed))
	}
	if r.Version >= 10 {
		for id := range leaders {
			if b, ok := img.Broker(id); ok {
				ep := kmsg.NewProduceResponseBroker()
				ep.NodeID, ep.Host, ep.Port = b.NodeID, b.Host, b.Port
				if b.Rack != "" {
					rack := b.Rack
					ep.Rack = &rack
				}
				resp.Brokers = append(resp.Brokers, ep)
			}
		}
	}
	return Reply(resp)
}
