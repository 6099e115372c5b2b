// Package quorum is weir's metadata quorum without its actor: a driver
// around go.etcd.io/raft/v3's RawNode (Node) and raft's Storage on weir's
// own log (Storage). Committed entries carry cluster/metadata records; every
// node applies them, in order, to an immutable metadata.Image that it
// publishes through an atomic pointer. A single node is its own voter; the
// voters are a static list of node ids (controller.quorum.voters). PreVote
// and CheckQuorum are on, and proposals are never forwarded: only the
// leader, the controller, proposes. A node outside the voters is a raft
// learner (learners.go): it never votes or campaigns, and applies the log
// once the leader has added it (Node.AddLearner); the only configuration
// changes ever applied add or remove learners.
//
// # Storage
//
// The raft log is the partition __cluster_metadata-0 of a log.Manager,
// always fsynced (LogConfig: flush.messages=1, no retention). Each raft
// entry is one record batch in Kafka's format: its partition leader epoch is
// the entry's term; its first record carries the headers "raft.index" (the
// raft index, 8 bytes big-endian) and "raft.type" (the raftpb.EntryType);
// a normal entry has one record per metadata record, whose value is the
// record's metadata.EncodeRecord bytes; an empty entry (a new leader's) has
// one record without value; a configuration change has one record whose
// value is the marshalled raftpb.ConfChange or ConfChangeV2. Records get
// consecutive offsets as Kafka's do, so offsets differ from raft indexes and
// may differ between nodes; Storage keeps the index -> offset table in
// memory and rebuilds it by scanning the log on open. Raft entry data (what
// Propose hands raft) is EncodeEntry's length-prefixed list of records.
//
// Beside the segments, in the partition directory: "quorum-state", the hard
// state (term, vote, commit) as JSON shaped like KRaft's, replaced
// atomically and fsynced; and the newest snapshot,
// "<index>-<term>.checkpoint" like KRaft's (the raft index it covers, 20
// digits, and its term, 10 digits): record batches whose first batch holds
// the raft snapshot metadata (index, term, conf state) in a record header
// and whose following batches hold the image's records (Image.Records,
// EncodeSnapshotData). Taking a snapshot compacts the log up to it with
// log.Log.DeleteRecordsBefore; a snapshot received from the leader empties
// the log. A conflicting suffix (a new leader's entries) is cut with
// log.Log.TruncateTo before the new entries are appended.
//
// # The caller's duties (the metadata actor)
//
//  1. Open the log.Manager, then OpenStorage on it with the same file
//     system and the voter list, then NewNode. The node restores the image
//     from the newest snapshot; raft hands back the committed entries after
//     it on the first HandleReady, so the image is rebuilt before anything
//     new is applied.
//  2. Call Tick at a fixed interval (one ticker per node); election and
//     heartbeat timeouts are counted in ticks (Config).
//  3. Hand every raft message from another node to Step.
//  4. Propose records only on the leader (IsLeader), after checking them
//     against the latest image and the proposals still in flight: a
//     committed record the image rejects stops the node with
//     ErrApplyFailed, since every replica would reject it the same way.
//     The done callback reports the entry's index once applied, or
//     ErrProposalDropped once a leader change discarded it; re-propose then.
//  5. Call Async once with a wake function: the storage writes then run
//     on a goroutine of the node's (raft's AsyncStorageWrites), so the
//     caller never waits on an fsync; wake is called from that goroutine
//     when a write finished. Without Async the writes are done inside
//     HandleReady (tests, tools).
//  6. After Tick, Step, Propose or a wake, call HandleReady until HasReady
//     is false. It hands raft's storage writes (entries, hard state, a
//     snapshot received) to the writer, which makes each durable (fsynced)
//     in order, taking the writes queued meanwhile together; it delivers
//     the messages raft held back for a write once it is durable (raft's
//     contract: nothing is acknowledged before it is durable), applies
//     committed entries in log order (entries durable here, committed by a
//     quorum) and publishes the image once per Ready. Send the messages it
//     returns (addressed by raft id: NodeIDOf); report failed sends with
//     ReportUnreachable and snapshot deliveries with ReportSnapshot. Call
//     Close when done.
//  7. Readers call Image from any goroutine; nothing else is safe for
//     concurrent use.
//  8. An error from HandleReady that wraps ErrStorageUnavailable (a
//     write failed: ENOSPC, EMFILE, EIO) is transient: the failed write and
//     those after it wait, nothing of them is acknowledged, no new Ready is
//     taken, Propose and Step refuse (a voter that cannot write neither
//     appends nor votes), and the caller calls HandleReady again after a
//     backoff; that call starts a retry (Retrying says one is under way),
//     which recovers the storage (a log an fsync error failed is reopened
//     from disk, cut to its durable prefix) and writes the waiting writes
//     again. StorageErr says whether the node is stalled. Any other error
//     (a corrupt log, an apply failure) is fatal: the node stops and every
//     later call returns it. Restart the process; the log on disk is
//     intact.
//
// Snapshots are taken every Config.SnapshotEntries applied entries, or on
// demand with Node.Snapshot; the writer writes them, in order with the
// appends. A new leader proposes a
// metadata.ControllerChangedRecord with its id and term as its first
// proposal (KRaft's LeaderChangeMessage), which sets the image's controller.
package quorum
