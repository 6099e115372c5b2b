package partition

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestProducerStateScenarios replays testdata/producer_state.txt. To
// regenerate the expected output after a deliberate change:
// go test ./actors/partition -run TestProducerStateScenarios -rewrite.
//
// Commands (each batch is appended at the next offset of a simulated log):
//
//	produce pid=P epoch=E seq=S count=N [ts=T] [txn]: a leader append
//	  (CheckAppend, then Update if accepted)
//	replicate pid=P epoch=E seq=S count=N [ts=T] [txn] [control]: a
//	  replayed batch (ObserveBatch)
//	state: the producers held and the end offset
//	expire now=T ms=M: RemoveExpired
//	restart: Snapshot, then LoadSnapshot into a new state
//	rebuild: replay every batch of the simulated log into a new state and
//	  compare it with the current one
func TestProducerStateScenarios(t *testing.T) {
	d := &scenario{s: NewProducerState()}
	datadriven.RunTest(t, "testdata/producer_state.txt", d.run)
}

type scenario struct {
	s   *ProducerState
	leo int64
	log []ProducerBatch
}

func (d *scenario) run(t *testing.T, td *datadriven.TestData) string {
	switch td.Cmd {
	case "produce":
		b := d.batch(t, td)
		chk := d.s.CheckAppend(b)
		switch chk.Verdict {
		case Accept:
			d.append(b)
			d.s.Update(b)
			return fmt.Sprintf("accept offsets %d-%d seq %d-%d", b.FirstOffset, b.LastOffset, b.FirstSeq, b.LastSeq)
		case Duplicate:
			return fmt.Sprintf("duplicate of offsets %d-%d", chk.Original.FirstOffset, chk.Original.LastOffset)
		}
		return fmt.Sprintf("%v (error %d): %s", chk.Verdict, chk.Verdict.ErrorCode(), chk.Reason)
	case "replicate":
		b := d.batch(t, td)
		d.append(b)
		d.s.ObserveBatch(b)
		return fmt.Sprintf("observed offsets %d-%d", b.FirstOffset, b.LastOffset)
	case "state":
		return describe(d.s)
	case "expire":
		var now, ms int64
		td.ScanArgs(t, "now", &now)
		td.ScanArgs(t, "ms", &ms)
		return fmt.Sprintf("removed %v", d.s.RemoveExpired(now, ms))
	case "restart":
		snap := d.s.Snapshot()
		d.s = NewProducerState()
		if err := d.s.LoadSnapshot(snap); err != nil {
			return err.Error()
		}
		return fmt.Sprintf("reloaded %d producers from %d bytes, end offset %d", d.s.Len(), len(snap), d.s.EndOffset())
	case "rebuild":
		r := NewProducerState()
		for _, b := range d.log {
			r.ObserveBatch(b)
		}
		if !bytes.Equal(r.Snapshot(), d.s.Snapshot()) {
			return "differs:\n" + describe(r)
		}
		return "equal"
	}
	t.Fatalf("unknown command %q", td.Cmd)
	return ""
}

// batch reads a batch's arguments and places it at the log end.
func (d *scenario) batch(t *testing.T, td *datadriven.TestData) ProducerBatch {
	var pid, ts int64
	var epoch int16
	var seq, count int32
	td.ScanArgs(t, "pid", &pid)
	td.ScanArgs(t, "epoch", &epoch)
	td.ScanArgs(t, "seq", &seq)
	td.ScanArgs(t, "count", &count)
	td.MaybeScanArgs(t, "ts", &ts)
	b := pb(pid, epoch, seq, count, d.leo)
	b.MaxTimestamp = ts
	b.Transactional = td.HasArg("txn") || td.HasArg("control")
	b.Control = td.HasArg("control")
	return b
}

func (d *scenario) append(b ProducerBatch) {
	d.leo = b.LastOffset + 1
	d.log = append(d.log, b)
}

// describe prints a state, producers in id order.
func describe(s *ProducerState) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "end offset %d\n", s.EndOffset())
	for _, id := range s.ProducerIDs() {
		e, _ := s.Entry(id)
		fmt.Fprintf(&sb, "pid %d epoch %d last-ts %d txn-first %d batches", id, e.Epoch, e.LastTimestamp, e.CurrentTxnFirstOffset)
		for _, m := range e.Batches {
			fmt.Fprintf(&sb, " [seq %d-%d @%d-%d]", m.FirstSeq, m.LastSeq, m.FirstOffset, m.LastOffset)
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}
