package failover

import (
	"cmp"
	"slices"
	"time"
)

// maxConsumerStall is the longest time a partition had an acknowledged
// record the consumer had not got while no record of that partition
// arrived: per partition, over the first reads of acknowledged records in
// arrival order, the time from the later of the previous arrival and the
// record's acknowledgement to its arrival. An acknowledged record the
// consumer had not got by endNs (a read without AtNs, or none) stalls its
// partition from the later of its acknowledgement and the partition's
// last arrival until endNs: a lower bound, the consumer was still behind
// when the round ended. Records are numbered as in CheckRound; reads of
// unacknowledged or foreign records do not count. It is the consumer's
// counterpart of the produce stall: the time a reader of one partition
// waited with data to read, which a poll returning other partitions'
// records hides.
func maxConsumerStall(sent int, acks []Ack, reads []Read, endNs int64) time.Duration {
	ackedAt := make([]int64, sent) // 0: not acknowledged
	for _, a := range acks {
		if !a.Err && int(a.Seq) < sent {
			ackedAt[a.Seq] = max(a.DoneNs, 1)
		}
	}
	type arrival struct {
		topic, partition int32
		at, acked        int64
	}
	got := make([]bool, sent)
	arr := make([]arrival, 0, len(reads))
	for _, r := range reads {
		if int(r.Seq) >= sent || r.AtNs == 0 || ackedAt[r.Seq] == 0 || got[r.Seq] {
			continue
		}
		got[r.Seq] = true
		arr = append(arr, arrival{r.Topic, r.Partition, r.AtNs, ackedAt[r.Seq]})
	}
	slices.SortFunc(arr, func(a, b arrival) int {
		return cmp.Or(cmp.Compare(a.topic, b.topic), cmp.Compare(a.partition, b.partition), cmp.Compare(a.at, b.at))
	})
	type key struct{ topic, partition int32 }
	last := map[key]int64{}
	var longest int64
	for k, a := range arr {
		from := a.acked
		if k > 0 && arr[k-1].topic == a.topic && arr[k-1].partition == a.partition {
			from = max(from, arr[k-1].at)
		}
		longest = max(longest, a.at-from)
		last[key{a.topic, a.partition}] = a.at
	}
	// The acknowledged records not got: each partition from its earliest
	// such acknowledgement (or its last arrival, if later) to endNs.
	behind := map[key]int64{}
	for _, a := range acks {
		if a.Err || int(a.Seq) >= sent || got[a.Seq] {
			continue
		}
		k := key{a.Topic, a.Partition}
		if t, ok := behind[k]; !ok || a.DoneNs < t {
			behind[k] = a.DoneNs
		}
	}
	for k, acked := range behind {
		longest = max(longest, endNs-max(acked, last[k]))
	}
	return time.Duration(max(longest, 0))
}
