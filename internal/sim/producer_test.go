package sim

import (
	"encoding/binary"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/actors/partition"
	"github.com/weirmq/weir/log/batch"
)

// producer is a client producing to one partition, one request at a time,
// to the node it believes leads: acks=all mostly, some acks=1. Each batch
// holds one record whose value is unique in the run. On
// NOT_LEADER_OR_FOLLOWER it takes the KIP-951 hint, else asks a random
// node's metadata; a lost answer times out.
type producer struct {
	w    *world
	id   int32
	part int32
	// guess is the node it sends to (0: unknown).
	guess    int32
	inflight uint64
	nextID   uint64
	// Counts for the run's summary.
	sent, ackedAll, ackedOne, failed int
	codes                            map[int16]int
}

func newProducer(w *world, id, part int32) *producer { return &producer{w: w, id: id, part: part} }

// start schedules the first send once the cluster may be up.
func (p *producer) start() { p.w.after(300+p.w.rng.Int64N(200), 0, p.send) }

// send sends the next batch, unless one is in flight.
func (p *producer) send() {
	w := p.w
	if p.inflight != 0 {
		return
	}
	if p.guess == 0 {
		p.refresh()
	}
	if p.guess == 0 {
		w.after(50+w.rng.Int64N(50), 0, p.send)
		return
	}
	p.nextID++
	id := p.nextID
	p.inflight = id
	acks := int16(-1)
	if w.rng.Float64() < w.cfg.Acks1Rate {
		acks = 1
	}
	data := p.batch(id)
	p.sent++
	to := w.nodes[p.guess]
	part := p.part
	w.net.send(p.id, to.id, 0, func() { to.onProduce(p, id, part, data, acks) })
	w.after(int64(w.cfg.ProduceTimeoutMs)+500, 0, func() {
		if p.inflight == id { // no answer: the request or the answer was lost
			p.inflight = 0
			p.guess = 0
			p.failed++
			if p.codes == nil {
				p.codes = map[int16]int{}
			}
			p.codes[-2]++
			p.next()
		}
	})
}

// next schedules the next send.
func (p *producer) next() { p.w.after(5+p.w.rng.Int64N(40), 0, p.send) }

// batch builds a one-record v2 batch whose value names (producer, id).
func (p *producer) batch(id uint64) []byte {
	var v [12]byte
	binary.BigEndian.PutUint32(v[:4], uint32(p.id))
	binary.BigEndian.PutUint64(v[4:], id)
	b, err := batch.Build(batch.Options{
		ProducerID: batch.NoProducerID, ProducerEpoch: batch.NoProducerEpoch, BaseSequence: batch.NoSequence,
		PartitionLeaderEpoch: batch.NoPartitionLeaderEpoch, BaseTimestamp: p.w.now,
	}, []kmsg.Record{{Value: v[:]}})
	if err != nil {
		p.w.fail("build batch: %v", err)
	}
	return b
}

// refresh asks a random running node's metadata for the leader.
func (p *producer) refresh() {
	w := p.w
	n := w.nodes[1+w.rng.IntN(w.cfg.Nodes)]
	if n.state != nodeRunning || n.topicID.IsZero() {
		return
	}
	if pt, ok := n.img.Partition(n.topicID, p.part); ok && pt.HasLeader() {
		p.guess = pt.Leader
	}
}

// onResponse takes an answer.
func (p *producer) onResponse(res *partition.AppendBatchesResult) {
	if res.ID != p.inflight {
		return
	}
	p.inflight = 0
	switch {
	case res.ErrorCode == 0 && res.Acks == -1:
		p.ackedAll++
	case res.ErrorCode == 0:
		p.ackedOne++
	case res.ErrorCode == kerr.NotLeaderForPartition.Code:
		p.failed++
		p.guess = 0
		if h := res.CurrentLeader.LeaderID; h > 0 {
			p.guess = h
		}
	default:
		p.failed++
	}
	if res.ErrorCode != 0 {
		if p.codes == nil {
			p.codes = map[int16]int{}
		}
		p.codes[res.ErrorCode]++
	}
	p.next()
}
