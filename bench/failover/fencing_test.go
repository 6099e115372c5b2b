package failover

import "testing"

// TestAckedByPaused: only the paused node's answers after SIGCONT, for
// partitions it led before, whose acknowledged place does not hold the
// record acknowledged there, count.
func TestAckedByPaused(t *testing.T) {
	f := pausedFence{addr: "n2", resumedNs: 100, led: map[topicPartition]bool{{"t", 0}: true, {"t", 1}: true}, topics: map[string]int32{"t": 0}}
	acks := []Ack{
		{Seq: 0, Partition: 0, Offset: 10}, // kept at its place
		{Seq: 1, Partition: 0, Offset: 11}, // read elsewhere: the paused node's place was truncated
		{Seq: 2, Partition: 1, Offset: 5},  // never read
		{Seq: 3, Partition: 2, Offset: 7},  // a partition it did not lead
		{Seq: 4, Partition: 0, Offset: 12, Err: true},
	}
	reads := []Read{{Seq: 0, Partition: 0, Offset: 10}, {Seq: 1, Partition: 0, Offset: 40}, {Seq: 9, Partition: 0, Offset: 11}}
	oks := []produceOK{
		{addr: "n2", topic: "t", partition: 0, base: 10, atNs: 150}, // kept: a leader's answer
		{addr: "n2", topic: "t", partition: 0, base: 11, atNs: 150}, // counts
		{addr: "n2", topic: "t", partition: 1, base: 5, atNs: 150},  // counts
		{addr: "n2", topic: "t", partition: 2, base: 7, atNs: 150},  // not led before
		{addr: "n2", topic: "t", partition: 1, base: 5, atNs: 50},   // before SIGCONT
		{addr: "n1", topic: "t", partition: 1, base: 5, atNs: 150},  // another node
		{addr: "n2", topic: "u", partition: 0, base: 1, atNs: 150},  // another topic, not led
	}
	if got := ackedByPaused(f, oks, acks, reads); got != 2 {
		t.Errorf("ackedByPaused = %d, want 2", got)
	}
	if got := ackedByPaused(f, nil, acks, reads); got != 0 {
		t.Errorf("no answers: ackedByPaused = %d, want 0", got)
	}
}
