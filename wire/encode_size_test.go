package wire

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A large response is encoded into one buffer of about its size, not one
// grown step by step (about five times its size allocated, over twice
// held at the last step).
func TestLargeResponsesEncodeOnce(t *testing.T) {
	fetch := kmsg.NewPtrFetchResponse()
	fetch.Version = 12
	for ti := range 3 {
		ft := kmsg.NewFetchResponseTopic()
		ft.Topic = fmt.Sprintf("topic-%d", ti)
		for pi := range 4 {
			p := kmsg.NewFetchResponseTopicPartition()
			p.Partition, p.RecordBatches = int32(pi), bytes.Repeat([]byte{1}, 1<<20)
			ft.Partitions = append(ft.Partitions, p)
		}
		fetch.Topics = append(fetch.Topics, ft)
	}
	join := kmsg.NewPtrJoinGroupResponse()
	join.Version, join.LeaderID, join.MemberID = 9, "m-0", "m-0"
	proto := "range"
	join.Protocol, join.ProtocolType = &proto, &proto
	describe := kmsg.NewPtrDescribeGroupsResponse()
	describe.Version = 5
	g := kmsg.NewDescribeGroupsResponseGroup()
	g.Group, g.State, g.ProtocolType, g.Protocol = "g", "Stable", "consumer", "range"
	for i := range 12 {
		m := kmsg.NewJoinGroupResponseMember()
		m.MemberID, m.ProtocolMetadata = fmt.Sprintf("m-%d", i), bytes.Repeat([]byte{2}, 1<<20)
		join.Members = append(join.Members, m)
		dm := kmsg.NewDescribeGroupsResponseGroupMember()
		dm.MemberID, dm.ClientID, dm.ClientHost = m.MemberID, "c", "/127.0.0.1"
		dm.ProtocolMetadata, dm.MemberAssignment = m.ProtocolMetadata, []byte("a")
		g.Members = append(g.Members, dm)
	}
	describe.Groups = append(describe.Groups, g)

	for _, body := range []kmsg.Response{fetch, join, describe} {
		var b []byte
		var err error
		n := allocated(func() { b, err = appendResponse(encodeBuffer(nil, body), 1, body) })
		if err != nil {
			t.Fatal(err)
		}
		grown := allocated(func() { _, _ = appendResponse(nil, 1, body) })
		t.Logf("%T: %d bytes encoded, %d allocated (%d grown by append)", body, len(b), n, grown)
		if bound := responseSizeBound(body); len(b) > bound || n > uint64(bound)+16<<10 {
			t.Errorf("%T: %d bytes encoded, %d allocated, bound %d", body, len(b), n, bound)
		}
	}
}
