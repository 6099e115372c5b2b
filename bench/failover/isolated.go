package failover

import (
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// isolatedAcks counts the records the isolated node of a partition fault
// acknowledged to the producer: the records of every Produce request the
// producer began to write on a connection to that node's address while
// it was cut off (from the cut, once its rules were in place, to the
// heal) that the node answered without error for their partition,
// whenever the answer came. A request begun after the cut cannot have
// reached a follower through the node, so with acks=all and
// min.insync.replicas=2 every such acknowledgement is a broken promise;
// with acks=1 they are the writes the lease lets through. The producer's
// errorTally feeds it (see tapConn); it sees franz-go's connections
// only.
type isolatedAcks struct {
	mu    sync.Mutex
	addr  string    // the isolated node's Kafka address, "" when none
	since time.Time // the cut
	until time.Time // the heal; zero while cut
	count int
}

// isolate starts a window: requests to addr begun from since on count.
func (a *isolatedAcks) isolate(addr string, since time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.addr, a.since, a.until, a.count = addr, since, time.Time{}, 0
}

// heal ends the window at until: requests begun later do not count;
// answers to those begun earlier still do.
func (a *isolatedAcks) heal(until time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.until = until
}

// acked returns the records counted since the last isolate.
func (a *isolatedAcks) acked() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.count
}

// watches reports whether a request to addr begun at t counts.
func (a *isolatedAcks) watches(addr string, t time.Time) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.addr != "" && addr == a.addr && !t.Before(a.since) && (a.until.IsZero() || t.Before(a.until))
}

// add counts n records.
func (a *isolatedAcks) add(n int) {
	a.mu.Lock()
	a.count += n
	a.mu.Unlock()
}

// produceSent is one watched Produce request: records per partition.
type produceSent map[string]int

func topicPartKey(topic string, id [16]byte, partition int32) string {
	if topic == "" {
		return fmt.Sprintf("%x/%d", id, partition)
	}
	return fmt.Sprintf("%s/%d", topic, partition)
}

// parseProduceRequest reads the records per partition of one whole
// Produce request frame (size prefix included).
func parseProduceRequest(frame []byte) (produceSent, error) {
	if len(frame) < requestHeader+2 {
		return nil, fmt.Errorf("produce request of %d bytes", len(frame))
	}
	ver := int16(binary.BigEndian.Uint16(frame[6:]))
	b := frame[requestHeader:]
	idLen := int(int16(binary.BigEndian.Uint16(b)))
	b = b[2:]
	if idLen > 0 {
		if idLen > len(b) {
			return nil, fmt.Errorf("produce request: client id of %d bytes", idLen)
		}
		b = b[idLen:]
	}
	req := kmsg.NewPtrProduceRequest()
	req.SetVersion(ver)
	if req.IsFlexible() {
		k := kbin{src: b}
		k.skipTags()
		if k.bad {
			return nil, fmt.Errorf("produce request: bad header tags")
		}
		b = k.src
	}
	if err := req.ReadFrom(b); err != nil {
		return nil, fmt.Errorf("produce request v%d: %w", ver, err)
	}
	out := produceSent{}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			out[topicPartKey(t.Topic, t.TopicID, p.Partition)] += batchRecords(p.Records)
		}
	}
	return out, nil
}

// batchRecords counts the records of the record batches (magic 2) in b.
func batchRecords(b []byte) int {
	n := 0
	for len(b) >= 61 {
		size := 12 + int(int32(binary.BigEndian.Uint32(b[8:])))
		n += int(int32(binary.BigEndian.Uint32(b[57:])))
		if size <= 12 || size > len(b) {
			break
		}
		b = b[size:]
	}
	return n
}

// ackedRecords counts the records of sent that resp acknowledged.
func ackedRecords(sent produceSent, resp *kmsg.ProduceResponse) int {
	n := 0
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode == 0 {
				n += sent[topicPartKey(t.Topic, t.TopicID, p.Partition)]
			}
		}
	}
	return n
}
