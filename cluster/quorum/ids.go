package quorum

// Raft ids cannot be 0 while Kafka node ids start at 0, so a node's raft id
// is its node id plus one.

// RaftID returns the raft id of node nodeID (>= 0).
func RaftID(nodeID int32) uint64 { return uint64(nodeID) + 1 }

// NodeIDOf returns the node id of raft id id (> 0).
func NodeIDOf(id uint64) int32 { return int32(id - 1) }
