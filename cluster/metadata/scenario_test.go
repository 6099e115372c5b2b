package metadata

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestScenarios replays testdata/*.txt: each command builds records with
// the proposal helpers, applies them as one log entry and prints them (or
// the error); "image" prints the image. Rewrite the expectations with
// go test ./cluster/metadata -run TestScenarios -rewrite.
func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		s := &scenario{img: Empty()}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			return s.run(t, d)
		})
	})
}

type scenario struct {
	img           *Image
	registrations int // gives every registration its own incarnation id
}

func (s *scenario) run(t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "image":
		return dumpImage(s.img)
	case "snapshot":
		return s.checkSnapshot()
	}
	recs, err := s.records(t, d)
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	return s.apply(recs)
}

// records turns a command into the records to propose.
func (s *scenario) records(t *testing.T, d *datadriven.TestData) ([]Record, error) {
	var node int32
	d.MaybeScanArgs(t, "node", &node)
	switch d.Cmd {
	case "cluster":
		var term uint64
		d.ScanArgs(t, "term", &term)
		return []Record{ClusterCreatedRecord{ClusterID: clusterIDForTest()},
			ControllerChangedRecord{ControllerID: node, Term: term}}, nil
	case "register":
		s.registrations++
		reg := registration(node, int64(s.registrations))
		d.MaybeScanArgs(t, "rack", &reg.Rack)
		recs, _, err := RegisterBrokerRecords(s.img, reg)
		return recs, err
	case "unfence":
		br, _ := s.img.Broker(node)
		return []Record{BrokerUnfencedRecord{NodeID: node, BrokerEpoch: br.Epoch}}, nil
	case "fence":
		br, _ := s.img.Broker(node)
		return FenceBrokerRecords(s.img, node, br.Epoch)
	case "create-topic":
		return s.createTopic(t, d)
	case "add-partitions":
		var name string
		var total int32
		d.ScanArgs(t, "topic", &name)
		d.ScanArgs(t, "total", &total)
		return AddPartitionRecords(s.img, name, total, nil)
	case "delete-topic":
		var name string
		d.ScanArgs(t, "topic", &name)
		return DeleteTopicRecords(s.img, name)
	case "elect":
		return s.elect(t, d, node)
	case "isr":
		return s.changeISR(t, d)
	case "allocate-pids":
		size := int64(DefaultProducerIDBlockSize)
		d.MaybeScanArgs(t, "size", &size)
		br, _ := s.img.Broker(node)
		rec, err := AllocateProducerIDs(s.img, node, br.Epoch, size)
		return []Record{rec}, err
	}
	t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
	return nil, nil
}

func (s *scenario) createTopic(t *testing.T, d *datadriven.TestData) ([]Record, error) {
	var name string
	var partitions int32
	var rf int16
	var id int
	var configs []string
	d.ScanArgs(t, "name", &name)
	d.ScanArgs(t, "partitions", &partitions)
	d.ScanArgs(t, "rf", &rf)
	d.ScanArgs(t, "id", &id)
	d.MaybeScanArgs(t, "configs", &configs)
	m := map[string]string{}
	for _, kv := range configs {
		k, v, _ := strings.Cut(kv, ":")
		m[k] = v
	}
	return NewTopicRecords(s.img, name, partitions, rf, m, nil, uuidN(id))
}

// partitionArg reads topic= and partition= and returns that partition.
func (s *scenario) partitionArg(t *testing.T, d *datadriven.TestData) Partition {
	var name string
	var index int32
	d.ScanArgs(t, "topic", &name)
	d.ScanArgs(t, "partition", &index)
	tp, ok := s.img.Topic(name)
	if !ok {
		t.Fatalf("%s: no topic %q", d.Pos, name)
	}
	p, ok := tp.Partition(index)
	if !ok {
		t.Fatalf("%s: no partition %d", d.Pos, index)
	}
	return p
}

// elect proposes node as leader, against the current partition epoch
// unless epoch= says otherwise.
func (s *scenario) elect(t *testing.T, d *datadriven.TestData, node int32) ([]Record, error) {
	p := s.partitionArg(t, d)
	epoch := p.PartitionEpoch
	d.MaybeScanArgs(t, "epoch", &epoch)
	br, _ := s.img.Broker(node)
	rec, err := ElectLeader(s.img, LeaderProposal{TopicID: p.TopicID, Partition: p.Index,
		Candidate: node, BrokerEpoch: br.Epoch, PartitionEpoch: epoch})
	return []Record{rec}, err
}

// changeISR has the current leader propose isr= at the current epochs.
func (s *scenario) changeISR(t *testing.T, d *datadriven.TestData) ([]Record, error) {
	p := s.partitionArg(t, d)
	var isr []int32
	d.ScanArgs(t, "isr", &isr)
	br, _ := s.img.Broker(p.Leader)
	return ChangeISR(s.img, ISRProposal{TopicID: p.TopicID, Partition: p.Index, Leader: p.Leader,
		BrokerEpoch: br.Epoch, LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch, ISR: isr})
}

// apply applies recs as the next log entry and lists them.
func (s *scenario) apply(recs []Record) string {
	offset := s.img.Offset() + 1
	b := NewBuilder(s.img)
	var out strings.Builder
	for _, rec := range recs {
		if err := b.Apply(rec, offset); err != nil {
			return "apply error: " + err.Error() + "\n"
		}
		fmt.Fprintf(&out, "%d: %v\n", offset, rec)
	}
	if len(recs) == 0 {
		out.WriteString("no records\n")
	}
	s.img = b.Image()
	return out.String()
}

func (s *scenario) checkSnapshot() string {
	recs := s.img.Records()
	restored, err := Restore(recs, s.img.Offset())
	if err != nil {
		return "restore error: " + err.Error() + "\n"
	}
	if !restored.Equal(s.img) {
		return "restored image differs\n"
	}
	return fmt.Sprintf("%d records restore an equal image\n", len(recs))
}

// dumpImage prints img deterministically.
func dumpImage(img *Image) string {
	var b strings.Builder
	fmt.Fprintf(&b, "offset=%d cluster=%s controller=%d term=%d next-producer-id=%d\n",
		img.Offset(), img.ClusterID(), img.ControllerID(), img.ControllerEpoch(), img.NextProducerID())
	for _, br := range img.Brokers() {
		fmt.Fprintf(&b, "broker %d epoch=%d fenced=%t kafka=%s rack=%q\n", br.NodeID, br.Epoch, br.Fenced, br.Addr(), br.Rack)
	}
	for _, tp := range img.Topics() {
		fmt.Fprintf(&b, "topic %s id=%s%s\n", tp.Name(), tp.ID(), formatConfigs(img.Config(TopicResource(tp.Name()))))
		for i := range tp.NumPartitions() {
			p, _ := tp.Partition(i)
			fmt.Fprintf(&b, "  %d: leader=%d leader-epoch=%d partition-epoch=%d replicas=%v isr=%v",
				i, p.Leader, p.LeaderEpoch, p.PartitionEpoch, p.Replicas, p.ISR)
			if len(p.ELR) > 0 {
				fmt.Fprintf(&b, " elr=%v", p.ELR)
			}
			if len(p.LastKnownELR) > 0 {
				fmt.Fprintf(&b, " last-known-elr=%v", p.LastKnownELR)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

func formatConfigs(m map[string]string) string {
	if len(m) == 0 {
		return ""
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+m[k])
	}
	return " configs={" + strings.Join(parts, " ") + "}"
}
