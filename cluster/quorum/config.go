package quorum

import (
	"fmt"
	"io"
	stdlog "log"
	"slices"

	"go.etcd.io/raft/v3"
)

// Config configures one node of the metadata quorum. Time is counted in
// ticks: the caller calls Node.Tick at a fixed interval (the actor's
// ticker), so Election and Heartbeat are in units of that interval.
type Config struct {
	// NodeID is this node's node.id (>= 0).
	NodeID int32
	// Voters is the static voter list (controller.quorum.voters): distinct
	// node ids >= 0. A single node is its own voter. A NodeID not among
	// them is a learner: it never campaigns or votes, and applies the log
	// once the leader has added it (Node.AddLearner).
	Voters []int32
	// ElectionTicks is raft's election timeout in ticks; it must exceed
	// HeartbeatTicks. Default 10.
	ElectionTicks int
	// HeartbeatTicks is the leader's heartbeat interval in ticks. Default 1.
	HeartbeatTicks int
	// MaxSizePerMsg bounds the entry bytes of one append message. Default
	// 1 MiB.
	MaxSizePerMsg uint64
	// MaxInflightMsgs bounds append messages in flight per follower.
	// Default 256.
	MaxInflightMsgs int
	// SnapshotEntries takes a snapshot (and compacts the log) once this many
	// entries were applied since the last one; 0 never snapshots on its own
	// (call Node.Snapshot). Default 10000.
	SnapshotEntries uint64
	// Logger receives raft's log lines; nil discards them.
	Logger raft.Logger
}

// DefaultConfig returns the defaults for a single voter, nodeID.
func DefaultConfig(nodeID int32) Config {
	return Config{
		NodeID:          nodeID,
		Voters:          []int32{nodeID},
		ElectionTicks:   10,
		HeartbeatTicks:  1,
		MaxSizePerMsg:   1 << 20,
		MaxInflightMsgs: 256,
		SnapshotEntries: 10000,
	}
}

// Validate checks the config.
func (c Config) Validate() error {
	switch {
	case c.NodeID < 0:
		return fmt.Errorf("%w: node id %d is negative", ErrInvalidConfig, c.NodeID)
	case len(c.Voters) == 0:
		return fmt.Errorf("%w: no voters", ErrInvalidConfig)
	case c.HeartbeatTicks < 1 || c.ElectionTicks <= c.HeartbeatTicks:
		return fmt.Errorf("%w: election ticks %d must exceed heartbeat ticks %d >= 1", ErrInvalidConfig, c.ElectionTicks, c.HeartbeatTicks)
	case c.MaxSizePerMsg == 0 || c.MaxInflightMsgs < 1:
		return fmt.Errorf("%w: max size per message %d and max inflight messages %d must be positive", ErrInvalidConfig, c.MaxSizePerMsg, c.MaxInflightMsgs)
	}
	seen := map[int32]bool{}
	for _, v := range c.Voters {
		if v < 0 || seen[v] {
			return fmt.Errorf("%w: voters %v: negative or repeated id %d", ErrInvalidConfig, c.Voters, v)
		}
		seen[v] = true
	}
	return nil
}

// IsVoter reports whether the node is one of the voters (else a learner).
func (c Config) IsVoter() bool { return slices.Contains(c.Voters, c.NodeID) }

// raftConfig is the RawNode config: PreVote and CheckQuorum on, proposals
// not forwarded (only the leader, the controller, proposes), storage
// writes asynchronous (Node.HandleReady, writer.go).
func (c Config) raftConfig(st *Storage, applied uint64) *raft.Config {
	logger := c.Logger
	if logger == nil {
		logger = &raft.DefaultLogger{Logger: stdlog.New(io.Discard, "", 0)}
	}
	return &raft.Config{
		ID:                        RaftID(c.NodeID),
		ElectionTick:              c.ElectionTicks,
		HeartbeatTick:             c.HeartbeatTicks,
		Storage:                   st,
		Applied:                   applied,
		MaxSizePerMsg:             c.MaxSizePerMsg,
		MaxInflightMsgs:           c.MaxInflightMsgs,
		MaxUncommittedEntriesSize: 64 << 20,
		CheckQuorum:               true,
		PreVote:                   true,
		DisableProposalForwarding: true,
		AsyncStorageWrites:        true,
		Logger:                    logger,
	}
}
