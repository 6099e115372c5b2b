package metadata

import (
	"reflect"
	"testing"
)

func sessionController(t *testing.T, props ...string) *Controller {
	t.Helper()
	c := testController(t, props...)
	c.Sessions = NewSessions(testSessionMs, testIntervalMs)
	return c
}

// checkFenced fails the test unless node is fenced in img, in no ISR, and
// leads nothing.
func checkFenced(t *testing.T, img *Image, node int32) {
	t.Helper()
	if br, _ := img.Broker(node); !br.Fenced {
		t.Errorf("broker %d is not fenced", node)
	}
	for _, tp := range img.Topics() {
		for i := range tp.NumPartitions() {
			p, _ := tp.Partition(i)
			if p.Leader == node || p.InISR(node) {
				t.Errorf("%s-%d still has broker %d: %+v", tp.Name(), i, node, p)
			}
		}
	}
}

func TestFenceExpired(t *testing.T) {
	img := withTopic(t, threeBrokers(t), "orders", 1, 6, 3)
	img = withTopic(t, img, "pairs", 2, 6, 2)
	c := sessionController(t)
	c.Sessions.Reset(img, 0)
	if fenced, recs := c.FenceExpired(img, 1000); fenced != nil || recs != nil {
		t.Fatalf("fenced %v (%v) within the sessions", fenced, recs)
	}
	c.Sessions.Heartbeat(1, 10, 1000)
	// Brokers 2 and 3 expire together: their fences are built in
	// sequence, so the partitions of "pairs" on both are left leaderless
	// with an empty ISR and the one fenced last in the ELR (the one fenced
	// first left an ISR still at min.insync.replicas, 1), and the batch
	// applies as one entry.
	fenced, recs := c.FenceExpired(img, 1600)
	if want := []BrokerRef{{2, 10}, {3, 10}}; !reflect.DeepEqual(fenced, want) {
		t.Fatalf("fenced %v, want %v", fenced, want)
	}
	after := applyBatch(t, img, recs...)
	checkFenced(t, after, 2)
	for _, tp := range after.Topics() {
		for i := range tp.NumPartitions() {
			p, _ := tp.Partition(i)
			before, _ := img.Partition(tp.ID(), i)
			switch {
			case p.InISR(1) && (p.Leader == 1) != (before.Leader == 1):
				t.Errorf("%s-%d: broker 1's leadership changed: %+v", tp.Name(), i, p)
			case !p.InISR(1) && (p.HasLeader() || len(p.ISR) != 0 || len(p.ELR) != 1 || !before.InISR(p.ELR[0])):
				t.Errorf("%s-%d without broker 1: %+v, want no leader, no ISR, one fenced ISR member in the ELR", tp.Name(), i, p)
			case p.InISR(1) && p.InISR(2):
				t.Errorf("%s-%d keeps fenced broker 2 in %v", tp.Name(), i, p.ISR)
			}
		}
	}
	if fenced, recs := c.FenceExpired(after, 1700); fenced != nil || recs != nil {
		t.Errorf("fenced brokers fenced again: %v", fenced)
	}
	if fenced, _ := (&Controller{Config: c.Config}).FenceExpired(img, 1e9); fenced != nil {
		t.Errorf("no sessions, yet fenced %v", fenced)
	}
}

// A broker whose fence takes more than one operation is fenced by
// successive batches, each within the bounds, the last with its
// BrokerFencedRecord.
func TestFenceExpiredOverOperations(t *testing.T) {
	img := bigTopic(t, threeBrokers(t), "big", 1, MaxRecordsPerOp+500, 1, 2)
	c := sessionController(t)
	c.Sessions.Reset(img, 0)
	c.Sessions.Heartbeat(2, 10, 1000)
	c.Sessions.Heartbeat(3, 10, 1000)
	fenced, recs := c.FenceExpired(img, 1600)
	if len(fenced) != 0 || len(recs) != MaxRecordsPerOp {
		t.Fatalf("first batch: fenced %v with %d records, want none with %d", fenced, len(recs), MaxRecordsPerOp)
	}
	img = applyBatch(t, img, recs...)
	if br, _ := img.Broker(1); br.Fenced {
		t.Fatal("fenced before its partitions moved")
	}
	fenced, recs = c.FenceExpired(img, 1700)
	if want := []BrokerRef{{1, 10}}; !reflect.DeepEqual(fenced, want) || len(recs) != 501 {
		t.Fatalf("second batch: fenced %v with %d records", fenced, len(recs))
	}
	img = applyBatch(t, img, recs...)
	checkFenced(t, img, 1)
}
