package failover

import (
	"encoding/binary"
	"net"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fakeConn records nothing on Write and serves canned bytes on Read.
type fakeConn struct {
	net.Conn
	read []byte
}

func (c *fakeConn) Write(p []byte) (int, error) { return len(p), nil }
func (c *fakeConn) Read(p []byte) (int, error) {
	n := copy(p, c.read)
	c.read = c.read[n:]
	return n, nil
}

// frame is a response frame: size, correlation id, (an empty tag buffer
// when flexible), body.
func frame(corr int32, flexible bool, body []byte) []byte {
	h := binary.BigEndian.AppendUint32(nil, uint32(corr))
	if flexible {
		h = append(h, 0)
	}
	h = append(h, body...)
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(h))), h...)
}

// requestHead is a request's size, key, version and correlation id.
func requestHead(key, version int16, corr int32, size int) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(size))
	b = binary.BigEndian.AppendUint16(b, uint16(key))
	b = binary.BigEndian.AppendUint16(b, uint16(version))
	return binary.BigEndian.AppendUint32(b, uint32(corr))
}

// TestTapCountsResponseErrors: a Produce answer with NOT_LEADER_OR_FOLLOWER
// on one partition and a FindCoordinator answer with
// COORDINATOR_LOAD_IN_PROGRESS, read in small pieces after requests
// written in pieces, count one each.
func TestTapCountsResponseErrors(t *testing.T) {
	produce := kmsg.NewProduceResponse()
	produce.Version = 9
	topic := kmsg.NewProduceResponseTopic()
	topic.Topic = "t"
	for _, code := range []int16{0, kerr.NotLeaderForPartition.Code} {
		p := kmsg.NewProduceResponseTopicPartition()
		p.ErrorCode = code
		topic.Partitions = append(topic.Partitions, p)
	}
	produce.Topics = append(produce.Topics, topic)
	find := kmsg.NewFindCoordinatorResponse()
	find.Version = 2
	find.ErrorCode = kerr.CoordinatorLoadInProgress.Code

	var in []byte
	in = append(in, frame(7, true, produce.AppendTo(nil))...)
	in = append(in, frame(8, false, find.AppendTo(nil))...)
	tally := newErrorTally()
	c := &tapConn{Conn: nil, tally: tally, inflight: map[int32]request{}}
	c.Conn = &fakeConn{read: in}
	req := append(requestHead(kmsg.Produce.Int16(), 9, 7, 20), make([]byte, 12)...) // 24 bytes: 4 size + 20
	req = append(req, requestHead(kmsg.FindCoordinator.Int16(), 2, 8, 8)...)
	for len(req) > 0 { // in pieces of 5 bytes
		n := min(5, len(req))
		_, _ = c.Write(req[:n])
		req = req[n:]
	}
	buf := make([]byte, 3)
	for range len(in) {
		if _, err := c.Read(buf); err != nil {
			t.Fatal(err)
		}
	}
	got := tally.snapshot()
	if got[ErrNotLeader] != 1 || got[ErrCoordinatorLoading] != 1 || len(got) != 2 {
		t.Errorf("counts %v, want one %s and one %s", got, ErrNotLeader, ErrCoordinatorLoading)
	}
	if len(c.inflight) != 0 {
		t.Errorf("requests still in flight: %v", c.inflight)
	}
}
