// Package membership is weir's gossip membership, on hashicorp/memberlist
// (SWIM with Lifeguard): which nodes are up, where they listen, and,
// quickly, that one died. It is a hint for the metadata quorum, whose
// records are the only facts: a node declared dead here is fenced only by
// the controller, when its heartbeats have stopped too.
//
// Start runs one node: it binds the gossip port, gossips the node's Meta
// (node id, broker epoch, Kafka and remote addresses, rack, voter) as
// memberlist node meta, and keeps joining the seeds in the background
// until it knows another member, and again whenever it is left alone, so
// every node of a cluster can start with the same seed list, its own
// address included, in any order. The memberlist node name is the node id
// and the first bytes of the process's random incarnation: a restarted
// process joins under a new name while its predecessor's entry is still
// declared dead, and two live processes with one node id are both members
// (DuplicateOf shows them; refusing one is the quorum's job).
//
// Changes to the other members reach Config.OnEvent as Joined, Updated,
// Failed and Departed events, in memberlist's order, on a goroutine of
// this package: memberlist calls its delegates with its locks held, so
// they only record the change and queue it. A graceful Leave marks the
// node's meta as leaving before memberlist's own leave message, because
// memberlist v0.7.0 does not tell its delegates whether a node left or
// failed.
//
// Dead-node reaping is memberlist's default: a node declared dead or left
// stays in memberlist's list, and in Members with state Dead or Left, for
// GossipToTheDeadTime (30 s), then is forgotten. DeadNodeReclaimTime stays
// 0: names are unique per process start, so no dead name is ever reused.
//
// The timing profiles (Fast for production, Relaxed for tests, LAN for
// reference) and the measurements that chose them are in profiles.go and
// docs/measurements.md; bench/membership measures them.
package membership
