package group

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Storing a group copies its members' metadata once: the leader's
// SyncGroup of 20 members with 1 MiB of metadata each allocates about that
// (the encoded record) and not several copies of it (a clone per member,
// then an encoding grown step by step). The batch the shell builds from
// the record is not part of the step.
func TestStoreGroupCopiesMetadataOnce(t *testing.T) {
	const members, size = 20, 1 << 20
	cfg := DefaultConfig()
	cfg.GroupInitialRebalanceDelayMs = 0
	g, err := NewGroup(cfg, "mem", 1000)
	if err != nil {
		t.Fatal(err)
	}
	join := func(id uint64, memberID string, metadata []byte) Output {
		r := kmsg.NewPtrJoinGroupRequest()
		r.Version, r.Group, r.MemberID = 3, "mem", memberID
		r.SessionTimeoutMillis, r.RebalanceTimeoutMillis = 60000, 60000
		r.ProtocolType = "consumer"
		r.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: metadata}}
		return g.JoinGroup(&JoinGroup{ID: id, Req: r, ClientID: "c", NowMs: 1000})
	}
	// The first member forms the group alone; the big members' joins
	// stay parked until it rejoins.
	first := join(1, "", []byte("small"))
	leader := first.Replies[0].Response.(*kmsg.JoinGroupResponse).MemberID
	for i := range members {
		join(uint64(i+2), "", bytes.Repeat([]byte{byte(i)}, size))
	}
	out := join(100, leader, []byte("small"))
	var ids []string
	for _, rep := range out.Replies {
		jr := rep.Response.(*kmsg.JoinGroupResponse)
		if jr.ErrorCode != 0 {
			t.Fatalf("join: error %d", jr.ErrorCode)
		}
		ids = append(ids, jr.MemberID)
	}
	if len(ids) != members+1 || g.State() != CompletingRebalance || g.leader != leader {
		t.Fatalf("%d joins answered, state %v", len(ids), g.State())
	}
	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Version, sync.Group, sync.Generation, sync.MemberID = 0, "mem", g.Generation(), g.leader
	for _, id := range ids {
		sync.GroupAssignment = append(sync.GroupAssignment, kmsg.SyncGroupRequestGroupAssignment{MemberID: id, MemberAssignment: []byte("a")})
	}
	out = Output{}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	out = g.SyncGroup(&SyncGroup{ID: 100, Req: sync, NowMs: 1002})
	runtime.ReadMemStats(&after)
	if len(out.Appends) != 1 || len(out.Appends[0].Records) != 1 {
		t.Fatalf("sync: %d appends", len(out.Appends))
	}
	stored := len(out.Appends[0].Records[0].Value)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("stored %d bytes, allocated %d (%.2fx)", stored, allocated, float64(allocated)/float64(stored))
	if stored < members*size || allocated > uint64(stored)*3/2 {
		t.Fatalf("storing a %d-byte group record allocated %d bytes", stored, allocated)
	}
}

// A loaded group keeps its own copy of its members' metadata and
// assignments, not slices of the log read it was loaded from (which would
// hold the whole read, and change under it when a read buffer is reused).
func TestLoadedGroupOwnsItsMetadata(t *testing.T) {
	v := kmsg.NewGroupMetadataValue()
	v.Version, v.ProtocolType, v.Generation = 3, "consumer", 4
	proto, leader := "range", "m1"
	v.Protocol, v.Leader = &proto, &leader
	vm := kmsg.NewGroupMetadataValueMember()
	vm.MemberID, vm.ClientID, vm.ClientHost = "m1", "c", "/127.0.0.1"
	vm.SessionTimeoutMillis, vm.RebalanceTimeoutMillis = 30000, 30000
	vm.Subscription, vm.Assignment = []byte("subscription"), []byte("assignment")
	v.Members = []kmsg.GroupMetadataValueMember{vm}
	lb := &logBuilder{t: t}
	lb.add(plain, GroupMetadataRecord("g", &v))
	l := NewLoader()
	if err := l.AddBatch(lb.batches[0]); err != nil {
		t.Fatal(err)
	}
	groups, err := l.Groups(DefaultConfig(), 1000)
	if err != nil || len(groups) != 1 {
		t.Fatalf("%d groups, %v", len(groups), err)
	}
	clear(lb.batches[0]) // the read buffer is reused
	m := groups[0].members["m1"]
	if m == nil || string(m.metadata("range")) != "subscription" || string(m.assignment) != "assignment" {
		t.Fatalf("member after its read buffer changed: %+v", m)
	}
}
