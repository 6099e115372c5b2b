package failover

import (
	"testing"
	"time"
)

// TestMaxConsumerStall: the stall is per partition, from the later of the
// previous arrival and the acknowledgement; records still unread at the
// end stall their partition until then; unacknowledged reads and reads
// without an arrival time (the read-back's) do not count as arrivals.
func TestMaxConsumerStall(t *testing.T) {
	ms := func(n int64) int64 { return n * int64(time.Millisecond) }
	acks := []Ack{
		{Seq: 0, Partition: 0, DoneNs: ms(10)},
		{Seq: 1, Partition: 1, DoneNs: ms(10)},
		{Seq: 2, Partition: 0, DoneNs: ms(20)},
		{Seq: 3, Partition: 1, DoneNs: ms(20)},
		{Seq: 4, Partition: 0, DoneNs: ms(30), Err: true},
	}
	reads := []Read{
		{Seq: 0, Partition: 0, AtNs: ms(15)},
		{Seq: 1, Partition: 1, AtNs: ms(12)},
		// Partition 0 waits from its ack at 20 to 120 while partition 1's
		// record arrives at 25: a poll-level gap would be 95, not 100.
		{Seq: 3, Partition: 1, AtNs: ms(25)},
		{Seq: 2, Partition: 0, AtNs: ms(120)},
		{Seq: 4, Partition: 0, AtNs: ms(500)}, // failed send: not counted
	}
	if got, want := maxConsumerStall(5, acks, reads, ms(130)), 100*time.Millisecond; got != want {
		t.Errorf("stall %v, want %v", got, want)
	}
	// Seq 2 found only by the read-back: partition 0 is behind from its
	// last arrival (15) or the ack (20), the later, until the end (300).
	back := append([]Read(nil), reads[:3]...)
	back = append(back, Read{Seq: 2, Partition: 0})
	if got, want := maxConsumerStall(5, acks, back, ms(300)), 280*time.Millisecond; got != want {
		t.Errorf("stall with a read-back record %v, want %v", got, want)
	}
	if got := maxConsumerStall(0, nil, nil, ms(300)); got != 0 {
		t.Errorf("empty round: stall %v", got)
	}
}
