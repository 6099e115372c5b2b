package failover

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/weirmq/weir/bench/dist"
)

// Ack is how one send of a round ended, as the producer's callback saw
// it. Seq numbers the round's records 0, 1, 2, ... in send order.
type Ack struct {
	Seq uint32
	// Topic numbers the topic (its index in the run's topics); Partition
	// is the partition within it.
	Topic     int32
	Partition int32
	// Offset is where the record was acknowledged; -1 when the client
	// does not know (acks=0).
	Offset int64
	// SentNs and DoneNs are the send and callback times, Unix nanoseconds.
	SentNs, DoneNs int64
	// Err is set when the send failed.
	Err bool
}

// Read is one record the consumer consumed.
type Read struct {
	Seq       uint32
	Topic     int32
	Partition int32
	Offset    int64
	// AtNs is when the consumer got it, Unix nanoseconds; 0 for a record
	// the round's read-back found (the group member had not read it).
	AtNs int64
}

// Check is what CheckRound found in one round.
type Check struct {
	// Sent counts the records sent, Acked and Failed their outcomes;
	// Pending = Sent - Acked - Failed had no outcome when the round ended.
	Sent, Acked, Failed, Pending int
	// Consumed counts the distinct records read (a record read again at
	// the same partition and offset, as after a rebalance, counts once).
	Consumed int
	// Lost counts acknowledged records never read.
	Lost int
	// Duplicated counts the extra places at which a record was read: one
	// record written twice (a retried send without idempotence) counts 1.
	Duplicated int
	// Reordered counts records read in a partition after a record of
	// the round sent later (higher Seq) in the same partition.
	Reordered int
	// Moved counts acknowledged records read, but not at the partition
	// and offset they were acknowledged at.
	Moved int
	// Unacked counts records read whose send was not acknowledged
	// (failed, or no outcome): allowed, the write may have happened.
	Unacked int
	// Foreign counts records read whose Seq is not below Sent.
	Foreign int
	// LostSeqs lists up to lostExamples of the lost records, lowest first.
	LostSeqs []uint32
	// MaxProduceStall is the longest time a partition waited for an
	// acknowledgement while it had a record in flight (see CheckRound).
	MaxProduceStall time.Duration
	// P50, P99 and MaxLatency are the acknowledged sends' latencies
	// (callback time minus send time; nearest rank).
	P50, P99, MaxLatency time.Duration
}

// lostExamples bounds Check.LostSeqs.
const lostExamples = 20

// place is where a record was first read.
type place struct {
	topic, partition int32
	offset           int64
}

// The per-record flags of CheckRound.
const (
	flagRead  = 1 << iota // read at least once
	flagAcked             // acknowledged
)

// CheckRound compares the sends of one round (sent records numbered 0 to
// sent-1, acks their outcomes) with what the consumer read. It sorts
// reads (by topic, partition, then offset) and sorts a list of indices into
// acks; it allocates about 30 bytes per record beyond its inputs.
//
// The rules are those of internal/chaos's checker, over record numbers
// instead of values: every acknowledged record read exactly once, at the
// partition and offset it was acknowledged at; in a partition the
// records in the order they were sent; records read but not acknowledged
// are counted, not faulted. A produce stall on a partition is the time
// from the later of its previous acknowledgement and the next record's
// send to that record's acknowledgement (acknowledgements of a partition
// in callback order): the time the partition had a record in flight and
// heard nothing back.
func CheckRound(sent int, acks []Ack, reads []Read) Check {
	c := Check{Sent: sent}
	flags := make([]uint8, sent)
	first := make([]place, sent)
	slices.SortFunc(reads, func(a, b Read) int {
		if a.Topic != b.Topic {
			return cmp.Compare(a.Topic, b.Topic)
		}
		if a.Partition != b.Partition {
			return cmp.Compare(a.Partition, b.Partition)
		}
		return cmp.Compare(a.Offset, b.Offset)
	})
	var maxSeq uint32
	for i, r := range reads {
		newPartition := i == 0 || r.Topic != reads[i-1].Topic || r.Partition != reads[i-1].Partition
		if !newPartition && r.Offset == reads[i-1].Offset {
			continue // read again at the same place: a redelivery
		}
		if newPartition {
			maxSeq = 0
		}
		if int(r.Seq) >= sent {
			c.Foreign++
			continue
		}
		if flags[r.Seq]&flagRead != 0 {
			if p := first[r.Seq]; p != (place{r.Topic, r.Partition, r.Offset}) {
				c.Duplicated++
			}
			continue
		}
		flags[r.Seq] |= flagRead
		first[r.Seq] = place{r.Topic, r.Partition, r.Offset}
		c.Consumed++
		if r.Seq < maxSeq {
			c.Reordered++
		} else {
			maxSeq = r.Seq
		}
	}
	lat := make([]time.Duration, 0, len(acks))
	for _, a := range acks {
		if int(a.Seq) >= sent {
			continue
		}
		if a.Err {
			c.Failed++
			continue
		}
		c.Acked++
		flags[a.Seq] |= flagAcked
		lat = append(lat, time.Duration(a.DoneNs-a.SentNs))
		if flags[a.Seq]&flagRead == 0 {
			c.Lost++
			if len(c.LostSeqs) < lostExamples {
				c.LostSeqs = append(c.LostSeqs, a.Seq)
			}
			continue
		}
		if p := first[a.Seq]; a.Offset >= 0 && p != (place{a.Topic, a.Partition, a.Offset}) {
			c.Moved++
		}
	}
	slices.Sort(c.LostSeqs)
	for _, f := range flags {
		if f&flagRead != 0 && f&flagAcked == 0 {
			c.Unacked++
		}
	}
	c.Pending = sent - c.Acked - c.Failed
	if len(lat) > 0 {
		slices.Sort(lat)
		c.P50, c.P99, c.MaxLatency = dist.Percentile(lat, 50), dist.Percentile(lat, 99), lat[len(lat)-1]
	}
	c.MaxProduceStall = maxProduceStall(acks)
	return c
}

// maxProduceStall is CheckRound's longest produce stall over the
// acknowledged sends.
func maxProduceStall(acks []Ack) time.Duration {
	idx := make([]int32, 0, len(acks))
	for i, a := range acks {
		if !a.Err {
			idx = append(idx, int32(i))
		}
	}
	slices.SortFunc(idx, func(i, j int32) int {
		a, b := &acks[i], &acks[j]
		if a.Topic != b.Topic {
			return cmp.Compare(a.Topic, b.Topic)
		}
		if a.Partition != b.Partition {
			return cmp.Compare(a.Partition, b.Partition)
		}
		return cmp.Compare(a.DoneNs, b.DoneNs)
	})
	var longest int64
	for k, i := range idx {
		a := &acks[i]
		from := a.SentNs
		if k > 0 {
			if prev := &acks[idx[k-1]]; prev.Topic == a.Topic && prev.Partition == a.Partition {
				from = max(from, prev.DoneNs)
			}
		}
		longest = max(longest, a.DoneNs-from)
	}
	return time.Duration(longest)
}

// String is the check's counts on one line.
func (c Check) String() string {
	return fmt.Sprintf("sent %d, acked %d, failed %d, pending %d, consumed %d: lost %d %v, duplicated %d, reordered %d, moved %d, unacked %d, foreign %d; stall %v, latency p50 %v p99 %v max %v",
		c.Sent, c.Acked, c.Failed, c.Pending, c.Consumed, c.Lost, c.LostSeqs, c.Duplicated, c.Reordered, c.Moved, c.Unacked, c.Foreign,
		c.MaxProduceStall, c.P50, c.P99, c.MaxLatency)
}
