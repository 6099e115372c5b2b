package failover

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/weirmq/weir/bench/cluster"
)

// Fencing of a paused leader (docs/failover.md, "Fencing of a paused
// leader"). While a pause round runs, the producer's connections note
// every partition of every Produce response read without an error code
// (produceOK). Once the round's records were read, ackedByPaused counts
// those that the paused node sent after SIGCONT, for a partition it led
// before the pause, whose acknowledged place (partition and base offset)
// does not hold, in the log read, the record acknowledged there: an
// acknowledgement the paused node gave while it was no longer the
// partition's leader, which nothing kept. An answer of the node elected
// anew (a higher leader epoch, as after a preferred-leader move back to
// it) holds its record, so it does not count.

// produceOK is one partition of a Produce response without error.
type produceOK struct {
	addr      string // the broker's host:port as dialled
	topic     string
	partition int32
	base      int64 // the base offset the broker answered
	atNs      int64 // when the response was read, Unix ns
}

// produceLog collects produceOKs while on.
type produceLog struct {
	mu  sync.Mutex
	on  bool
	oks []produceOK
}

// start clears the log and turns it on.
func (l *produceLog) start() {
	l.mu.Lock()
	l.on, l.oks = true, nil
	l.mu.Unlock()
}

// stop turns the log off and returns what it collected.
func (l *produceLog) stop() []produceOK {
	l.mu.Lock()
	defer l.mu.Unlock()
	oks := l.oks
	l.on, l.oks = false, nil
	return oks
}

// note records the partitions of resp answered without error by addr.
func (l *produceLog) note(addr string, resp *kmsg.ProduceResponse) {
	now := time.Now().UnixNano()
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.on {
		return
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode == 0 {
				l.oks = append(l.oks, produceOK{addr: addr, topic: t.Topic, partition: p.Partition, base: p.BaseOffset, atNs: now})
			}
		}
	}
}

// pausedFence is what ackedByPaused needs of a pause round.
type pausedFence struct {
	// addr is the paused node's host:port as the producer dialled it.
	addr string
	// resumedNs is when SIGCONT was sent, Unix ns.
	resumedNs int64
	// led holds the partitions the node led before the pause.
	led map[topicPartition]bool
	// topics numbers the topics as Ack.Topic does.
	topics map[string]int32
}

// ackedByPaused counts the produceOKs of f's node after its SIGCONT, for
// partitions it led before the pause, whose acknowledged place does not
// hold the record acknowledged there in reads (see the package comment
// above). It is plain code: no I/O, no clock.
func ackedByPaused(f pausedFence, oks []produceOK, acks []Ack, reads []Read) int {
	ackedAt := map[place]uint32{}
	for _, a := range acks {
		if !a.Err && a.Offset >= 0 {
			ackedAt[place{a.Topic, a.Partition, a.Offset}] = a.Seq
		}
	}
	kept := map[place]bool{}
	for _, r := range reads {
		at := place{r.Topic, r.Partition, r.Offset}
		if seq, ok := ackedAt[at]; ok && seq == r.Seq {
			kept[at] = true
		}
	}
	n := 0
	for _, ok := range oks {
		if ok.addr != f.addr || ok.atNs < f.resumedNs || !f.led[topicPartition{ok.topic, ok.partition}] {
			continue
		}
		t, known := f.topics[ok.topic]
		if !known || !kept[place{t, ok.partition, ok.base}] {
			n++
		}
	}
	return n
}

// brokerAddr is host:port as franz-go dials it.
func brokerAddr(host string, port int32) string {
	return net.JoinHostPort(host, strconv.Itoa(int(port)))
}

// startFencing turns the producer's log of Produce answers on for a
// pause round (franz-go only: librdkafka's connections are not tapped).
func (r *runner) startFencing(f Fault) {
	if p, ok := r.prod.(*producer); ok && f == FaultPause {
		p.tally.produces.start()
	}
}

// fencing is the round's AckedByPaused: -1 unless f is pause and the
// producer franz-go; -1 and a problem when the paused node's address is
// not known.
func (r *runner) fencing(ctx context.Context, f Fault, out faultOutcome, acks []Ack, reads []Read) (int, string) {
	p, ok := r.prod.(*producer)
	if !ok || f != FaultPause {
		return -1, ""
	}
	oks := p.tally.produces.stop()
	if out.resumed.IsZero() || len(out.victims) != 1 {
		return -1, "acked_by_paused: the pause did not run"
	}
	v := out.victims[0]
	fence := pausedFence{resumedNs: out.resumed.UnixNano(), led: map[topicPartition]bool{}, topics: topicIndex(r.fl.topics)}
	// The producer's own Metadata names the address it dialled; a node
	// whose view lags may not list the victim yet, so ask until one does.
	_, err := cluster.PollUntil(ctx, r.cfg.RoundTimeout, 50*time.Millisecond, fmt.Sprintf("the address of node %d", v), func(ctx context.Context) (bool, error) {
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		meta, err := kmsg.NewPtrMetadataRequest().RequestWith(rctx, p.cl)
		if err != nil {
			return false, err
		}
		for _, b := range meta.Brokers {
			if b.NodeID == v {
				fence.addr = brokerAddr(b.Host, b.Port)
			}
		}
		return fence.addr != "", nil
	})
	if err != nil {
		return -1, "acked_by_paused: " + err.Error()
	}
	for _, ps := range out.before {
		if ps.Leader == v {
			fence.led[topicPartition{ps.Topic, ps.Partition}] = true
		}
	}
	return ackedByPaused(fence, oks, acks, reads), ""
}
