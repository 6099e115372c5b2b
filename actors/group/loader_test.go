package group

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/log/batch"
)

// logBuilder lays batches out as a partition would store them.
type logBuilder struct {
	t       *testing.T
	next    int64
	batches [][]byte
}

func (l *logBuilder) add(opts batch.Options, recs ...Record) {
	l.t.Helper()
	krs := make([]kmsg.Record, len(recs))
	for i, r := range recs {
		krs[i] = kmsg.Record{OffsetDelta: int32(i), Key: r.Key, Value: r.Value}
	}
	opts.BaseOffset = l.next
	b, err := batch.Build(opts, krs)
	if err != nil {
		l.t.Fatal(err)
	}
	l.batches = append(l.batches, b)
	l.next += int64(len(recs))
}

var plain = batch.Options{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}

func control(pid int64, commit bool) (batch.Options, Record) {
	k := kmsg.ControlRecordKey{Type: kmsg.ControlRecordKeyTypeAbort}
	if commit {
		k.Type = kmsg.ControlRecordKeyTypeCommit
	}
	return batch.Options{ProducerID: pid, BaseSequence: -1, Transactional: true, Control: true},
		Record{Key: k.AppendTo(nil), Value: []byte{0, 0, 0, 0, 0, 0}}
}

func om(off int64) OffsetAndMetadata {
	return OffsetAndMetadata{Offset: off, LeaderEpoch: -1, ExpireTimestampMs: -1, CommitTimestampMs: 1}
}

func TestLoaderTombstonesAndTransactions(t *testing.T) {
	l := &logBuilder{t: t}
	tp := TopicPartition{"t", 0}
	tp1 := TopicPartition{"t", 1}
	l.add(plain, OffsetCommitRecord("a", tp, om(1)), OffsetCommitRecord("a", tp1, om(2)))
	l.add(plain, OffsetCommitRecord("a", tp, om(3)), OffsetCommitTombstone("a", tp1))
	// A committed transaction's offsets count; an aborted one's do not.
	txn := batch.Options{ProducerID: 7, BaseSequence: -1, Transactional: true}
	l.add(txn, OffsetCommitRecord("b", tp, om(10)))
	l.add(control(7, true))
	txn.ProducerID = 8
	l.add(txn, OffsetCommitRecord("b", tp1, om(20)))
	l.add(control(8, false))
	// An open transaction stays pending: require_stable sees it.
	txn.ProducerID = 9
	l.add(txn, OffsetCommitRecord("c", tp, om(30)))
	// A group that is deleted leaves nothing; unknown keys are skipped.
	v := kmsg.NewGroupMetadataValue()
	v.Version, v.ProtocolType, v.Generation = 3, "consumer", 4
	l.add(plain, GroupMetadataRecord("d", &v), Record{Key: []byte{0, 7}, Value: []byte{1}})
	l.add(plain, GroupMetadataTombstone("d"))

	ld := NewLoader()
	for _, b := range l.batches {
		if err := ld.AddBatch(b); err != nil {
			t.Fatal(err)
		}
	}
	groups, err := ld.Groups(DefaultConfig(), 100)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*Group{}
	for _, g := range groups {
		byID[g.ID()] = g
	}
	if len(groups) != 3 || byID["d"] != nil {
		t.Fatalf("loaded %d groups: %v", len(groups), byID)
	}
	a := byID["a"]
	if c := a.offsets.committed[tp]; len(a.offsets.committed) != 1 || c.Offset != 3 || c.recordOffset != 2 {
		t.Fatalf("group a offsets = %+v", a.offsets.committed)
	}
	if a.State() != Empty || a.protocolType != nil || a.Generation() != 0 {
		t.Fatalf("group a = %s gen %d", a.State(), a.Generation())
	}
	b := byID["b"]
	if len(b.offsets.committed) != 1 || b.offsets.committed[tp].Offset != 10 {
		t.Fatalf("group b offsets = %+v", b.offsets.committed)
	}
	c := byID["c"]
	got := c.FetchOffsets([]kmsg.OffsetFetchRequestGroupTopic{{Topic: "t", Partitions: []int32{0}}}, true)
	if p := got.Topics[0].Partitions[0]; p.ErrorCode != 88 || p.Offset != -1 {
		t.Fatalf("pending txn offset fetch = %+v", p)
	}
}

func TestLoaderBadInput(t *testing.T) {
	ld := NewLoader()
	if err := ld.AddBatch([]byte{1, 2, 3}); err == nil {
		t.Fatal("a truncated batch loaded")
	}
	l := &logBuilder{t: t}
	good := OffsetCommitRecord("a", TopicPartition{"t", 0}, om(5))
	l.add(plain, Record{Key: []byte{0, 1, 0}, Value: []byte{1}}, Record{Key: good.Key, Value: []byte{0, 3}}, good)
	err := ld.AddBatch(l.batches[0])
	if !errors.Is(err, ErrBadRecord) {
		t.Fatalf("AddBatch = %v, want ErrBadRecord", err)
	}
	groups, _ := ld.Groups(DefaultConfig(), 0)
	if len(groups) != 1 || groups[0].offsets.committed[TopicPartition{"t", 0}].Offset != 5 {
		t.Fatalf("the good record after bad ones was not applied: %v", groups)
	}
}

// TestLoaderRestoresMembers checks a stable group's members, timers and
// an over-capacity rebalance after a load.
func TestLoaderRestoresMembers(t *testing.T) {
	v := kmsg.NewGroupMetadataValue()
	v.Version, v.ProtocolType, v.Generation = 3, "consumer", 5
	proto, leader := "range", "m2"
	v.Protocol, v.Leader, v.CurrentStateTimestamp = &proto, &leader, 50
	inst := "i1"
	for _, id := range []string{"m1", "m2"} {
		m := kmsg.NewGroupMetadataValueMember()
		m.MemberID, m.ClientID, m.SessionTimeoutMillis, m.RebalanceTimeoutMillis = id, "c", 10000, 20000
		m.Subscription, m.Assignment = subscription("t"), []byte(id)
		if id == "m1" {
			m.InstanceID = &inst
		}
		v.Members = append(v.Members, m)
	}
	l := &logBuilder{t: t}
	l.add(plain, GroupMetadataRecord("g", &v))
	ld := NewLoader()
	if err := ld.AddBatch(l.batches[0]); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	groups, err := ld.Groups(cfg, 1000)
	if err != nil {
		t.Fatal(err)
	}
	g := groups[0]
	if g.State() != Stable || g.leader != "m2" || g.static["i1"] != "m1" || g.members["m1"].heartbeatDeadlineMs != 11000 {
		t.Fatalf("loaded %s leader %s static %v", g.State(), g.leader, g.static)
	}
	if !g.subscribed["t"] || g.stateTimestampMs != 50 {
		t.Fatalf("subscribed %v ts %d", g.subscribed, g.stateTimestampMs)
	}
	// A heartbeat of the loaded generation works at once.
	req := kmsg.NewPtrHeartbeatRequest()
	req.Group, req.MemberID, req.Generation, req.Version = "g", "m2", 5, 4
	out := g.Heartbeat(&Heartbeat{ID: 1, Req: req, NowMs: 1001})
	if code := out.Replies[0].Response.(*kmsg.HeartbeatResponse).ErrorCode; code != 0 {
		t.Fatalf("heartbeat after load: %d", code)
	}
	cfg.GroupMaxSize = 1
	groups, _ = ld.Groups(cfg, 1000)
	if groups[0].State() != PreparingRebalance {
		t.Fatalf("over-capacity group is %s", groups[0].State())
	}
}
