package partition

import (
	"github.com/asynkron/protoactor-go/actor"
)

// Non-blocking requests for callers that must not wait where they send (a
// Kafka handler sends in request order, then collects the answers in an
// Inbox from a goroutine of its own), and reads served on the caller's
// goroutine from the log and the published Status.

// SendAppend sends req to the actor with replyTo as the sender and
// returns at once; the AppendBatchesResult (with req.ID) arrives there, or
// *actor.DeadLetterResponse if the actor is gone. The actor takes
// req.Records over: the log sets offsets and the leader epoch in place,
// so the caller must not reuse the buffer (wire never reuses a request
// frame). Appends sent in order from one goroutine reach the actor in
// that order.
func (c *Client) SendAppend(req *AppendBatches, replyTo *actor.PID) {
	c.system.Root.RequestWithCustomSender(c.pid, req, replyTo)
}

// SendWatch parks req in the actor (see WatchHighWatermark); the answer
// goes to req.ReplyTo.
func (c *Client) SendWatch(req *WatchHighWatermark) { c.system.Root.Send(c.pid, req) }

// SendCancelWatch drops a watch that is no longer needed.
func (c *Client) SendCancelWatch(req *CancelWatch) { c.system.Root.Send(c.pid, req) }

// SendDeleteRecords sends req; the DeleteRecordsResult goes to replyTo.
func (c *Client) SendDeleteRecords(req *DeleteRecords, replyTo *actor.PID) {
	c.system.Root.RequestWithCustomSender(c.pid, req, replyTo)
}

// SendDescribeProducers sends req; the DescribeProducersResult goes to
// replyTo.
func (c *Client) SendDescribeProducers(req *DescribeProducers, replyTo *actor.PID) {
	c.system.Root.RequestWithCustomSender(c.pid, req, replyTo)
}

// ReadNow serves m at once on the caller's goroutine, from the log and the
// last published Status (the high watermark, leader epoch and role);
// m.MaxWaitMs is ignored. Park a WatchHighWatermark to wait for data.
func (c *Client) ReadNow(m *ReadRecords) *ReadRecordsResult {
	return readLog(c.log, c.board.status.Load(), m)
}

// SendSyncStatus sends req; the StatusSynced goes to replyTo once the
// actor has handled everything sent to it before.
func (c *Client) SendSyncStatus(req *SyncStatus, replyTo *actor.PID) {
	c.system.Root.RequestWithCustomSender(c.pid, req, replyTo)
}

// ListOffset answers ListOffsets for ts (-2 earliest, -1 latest, -3 the
// largest timestamp, or a timestamp) on the caller's goroutine, from the
// last published status. currentLeaderEpoch NoLeaderEpochCheck skips
// fencing.
func (c *Client) ListOffset(ts int64, currentLeaderEpoch int32) ListOffsetResult {
	return listOffset(c.log, c.board.status.Load(), ts, currentLeaderEpoch)
}

// ListOffsetAt is ListOffset from st, a status from StatusSynced (nil: the
// partition has no log, NOT_LEADER_OR_FOLLOWER).
func (c *Client) ListOffsetAt(st *Status, ts int64, currentLeaderEpoch int32) ListOffsetResult {
	return listOffset(c.log, st, ts, currentLeaderEpoch)
}

// EndOffsetForEpoch answers OffsetForLeaderEpoch on the caller's
// goroutine. currentLeaderEpoch NoLeaderEpochCheck skips fencing.
func (c *Client) EndOffsetForEpoch(epoch, currentLeaderEpoch int32) EpochEndResult {
	return endOffsetForEpoch(c.log, c.board.status.Load(), epoch, currentLeaderEpoch)
}
