package wire

import (
	"crypto/rand"
	"fmt"
	"runtime"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// joinMemoryMembers and joinMemoryMetadata size TestJoinGroupMemory: what
// the group receives is their product.
const (
	joinMemoryMembers  = 40
	joinMemoryMetadata = 1 << 20
)

// What a group holds for its members stays near the metadata they sent:
// 40 members join with 1 MiB of protocol metadata each; while their joins
// are parked, and once the join phase completed and the leader got every
// member's metadata, the broker's live heap has grown by at most 1.5x that
// metadata. (It held each member's metadata inside its request frame, a
// pooled buffer of twice the size, for as long as the member stayed.)
func TestJoinGroupMemory(t *testing.T) {
	s, b := startBroker(t, groupTestProps)
	createTopic(t, b, "jm", 1)
	lead := dial(t, s)
	findCoordinatorV0(t, lead, "jm")

	joinReq := func(memberID string, metadata []byte) *kmsg.JoinGroupRequest {
		r := kmsg.NewPtrJoinGroupRequest()
		r.Version, r.Group, r.MemberID = 3, "jm", memberID
		r.SessionTimeoutMillis, r.RebalanceTimeoutMillis = 60000, 60000
		r.ProtocolType = "consumer"
		r.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: metadata}}
		return r
	}
	// The leader forms the group alone: generation 1, Stable.
	jr := retryLoading(t, lead, joinReq("", []byte("small")), func(r *kmsg.JoinGroupResponse) int16 { return r.ErrorCode })
	if jr.ErrorCode != 0 || jr.Generation != 1 {
		t.Fatalf("first join: %+v", jr)
	}
	leaderID := jr.MemberID
	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Version, sync.Group, sync.Generation, sync.MemberID = 0, "jm", 1, leaderID
	if sr := exchange[*kmsg.SyncGroupResponse](lead, sync, 2); sr.ErrorCode != 0 {
		t.Fatalf("first sync: %+v", sr)
	}

	base := liveHeap()
	// Each big member joins on its own connection; the joins stay parked
	// until the leader rejoins.
	members := make([]*client, joinMemoryMembers)
	for i := range members {
		members[i] = dial(t, s)
		md := make([]byte, joinMemoryMetadata)
		_, _ = rand.Read(md)
		members[i].send(joinReq("", md), 1)
	}
	received := uint64(joinMemoryMembers * joinMemoryMetadata)
	describe := kmsg.NewPtrDescribeGroupsRequest()
	describe.Version, describe.Groups = 0, []string{"jm"}
	waitUntil(t, "every member parked in the join", func() bool {
		dr := exchange[*kmsg.DescribeGroupsResponse](lead, describe, 3)
		return len(dr.Groups) == 1 && len(dr.Groups[0].Members) == joinMemoryMembers+1
	})
	check := func(when string) {
		t.Helper()
		grown := int64(liveHeap()) - int64(base)
		t.Logf("%s: live heap grew %.1f MiB for %.1f MiB of metadata (%.2fx)", when,
			float64(grown)/(1<<20), float64(received)/(1<<20), float64(grown)/float64(received))
		if grown > int64(received)*3/2 {
			t.Errorf("%s: live heap grew by %d bytes, over 1.5x the %d bytes of metadata received", when, grown, received)
		}
	}
	check("joins parked")

	// The leader rejoins: the join phase completes with every member.
	lead.send(joinReq(leaderID, []byte("small")), 4)
	lr := kmsg.NewPtrJoinGroupResponse()
	lr.Version = 3
	lead.expectCorr(lr, 4)
	if lr.ErrorCode != 0 || lr.LeaderID != leaderID || len(lr.Members) != joinMemoryMembers+1 {
		t.Fatalf("leader's join: code %d, leader %s, %d members", lr.ErrorCode, lr.LeaderID, len(lr.Members))
	}
	lr = nil
	for i, c := range members {
		r := kmsg.NewPtrJoinGroupResponse()
		r.Version = 3
		c.expectCorr(r, 1)
		if r.ErrorCode != 0 || r.Generation != 2 {
			t.Fatalf("member %d: %s", i, fmt.Sprint(r.ErrorCode, r.Generation))
		}
	}
	check("join completed")
}
