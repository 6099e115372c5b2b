package quorum

import (
	"testing"

	"github.com/weirmq/weir/cluster/metadata"
)

// A single voter's status: it leads, and its high watermark and log end
// offset are the metadata log's end offset, not the raft index (entries
// hold several records, so the two differ).
func TestStatusSingleVoter(t *testing.T) {
	tn := newTestNode(t, 1, []int32{1})
	tn.settle()
	tn.populate()
	s := tn.n.Status()
	leo := tn.st.Log().LogEndOffset()
	if !s.Leader || s.LeaderID != 1 || s.Term == 0 || s.HighWatermark != leo || int64(tn.n.Applied()) == leo {
		t.Fatalf("status %+v, log end offset %d, applied index %d", s, leo, tn.n.Applied())
	}
	if len(s.Voters) != 1 || s.Voters[0].ID != 1 || s.Voters[0].LogEndOffset != leo || len(s.Observers) != 0 {
		t.Fatalf("voters %+v observers %+v, log end offset %d", s.Voters, s.Observers, leo)
	}
}

// Three voters: the leader reports every voter's progress in its log's
// offsets; a follower knows only the leader.
func TestStatusThreeVoters(t *testing.T) {
	c := newTestCluster(t, 1, 2, 3)
	lead := c.leader()
	c.propose(metadata.ClusterCreatedRecord{ClusterID: testClusterID})
	c.checkConverged()
	s := lead.n.Status()
	leo := lead.st.Log().LogEndOffset()
	if !s.Leader || s.HighWatermark != leo || len(s.Voters) != 3 {
		t.Fatalf("leader status %+v, log end offset %d", s, leo)
	}
	for _, v := range s.Voters {
		if v.LogEndOffset != leo {
			t.Fatalf("voter %d at %d, leader's log ends at %d", v.ID, v.LogEndOffset, leo)
		}
	}
	// Cut a follower off: its end offset stays behind the high watermark.
	var f *testNode
	for _, id := range c.ids {
		if id != lead.cfg.NodeID {
			f = c.nodes[id]
		}
	}
	c.down[f.cfg.NodeID] = true
	c.propose(metadata.ConfigRecord{ResourceType: metadata.ResourceBroker, Name: "log.retention.ms", Value: "1"})
	s = lead.n.Status()
	for _, v := range s.Voters {
		if v.ID == f.cfg.NodeID && v.LogEndOffset >= s.HighWatermark {
			t.Fatalf("cut-off voter %d at %d, high watermark %d", v.ID, v.LogEndOffset, s.HighWatermark)
		}
	}
	if fs := f.n.Status(); fs.Leader || fs.LeaderID != lead.cfg.NodeID || len(fs.Voters) != 0 {
		t.Fatalf("follower status %+v", fs)
	}
}
