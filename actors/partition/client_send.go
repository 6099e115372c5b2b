package partition

import (
	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Non-blocking requests for callers that must not wait where they send (a
// Kafka handler sends in request order, then collects the answers in an
// Inbox from a goroutine of its own), and reads served on the caller's
// goroutine from the log and the published Status.

// SendAppend sends req to the actor with replyTo as the sender and
// returns at once; the AppendBatchesResult (with req.ID) arrives there,
// also when the actor is gone (gone.go). The actor takes
// req.Records over: the log sets offsets and the leader epoch in place,
// so the caller must not reuse the buffer (wire never reuses a request
// frame). Appends sent in order from one goroutine reach the actor in
// that order.
func (c *Client) SendAppend(req *AppendBatches, replyTo *actor.PID) {
	c.sendFrom(req, replyTo)
}

// SendWatch parks req in the actor (see WatchHighWatermark); the answer
// goes to req.ReplyTo.
func (c *Client) SendWatch(req *WatchHighWatermark) { c.send(req) }

// SendCancelWatch drops a watch that is no longer needed.
func (c *Client) SendCancelWatch(req *CancelWatch) { c.send(req) }

// SendDeleteRecords sends req; the DeleteRecordsResult goes to replyTo.
func (c *Client) SendDeleteRecords(req *DeleteRecords, replyTo *actor.PID) {
	c.sendFrom(req, replyTo)
}

// SendDescribeProducers sends req; the DescribeProducersResult goes to
// replyTo.
func (c *Client) SendDescribeProducers(req *DescribeProducers, replyTo *actor.PID) {
	c.sendFrom(req, replyTo)
}

// ReadNow serves m at once on the caller's goroutine, from the log and the
// last published Status (the high watermark, leader epoch and role);
// m.MaxWaitMs is ignored. Park a WatchHighWatermark to wait for data.
func (c *Client) ReadNow(m *ReadRecords) *ReadRecordsResult {
	if code := c.board.stoppedCode(); code != 0 {
		return goneRead(code)
	}
	res := readLog(c.log, c.board.status.Load(), m)
	c.noteRead(storageRead, res.ErrorCode, res.storageErr)
	return res
}

// noteRead records a read's storage outcome (storage_health.go): a
// KAFKA_STORAGE_ERROR fails op, a success heals it, other errors say
// nothing about the storage.
func (c *Client) noteRead(op string, code int16, err error) {
	switch code {
	case 0:
		c.board.noteStorage(c.logger, op, nil)
	case kerr.KafkaStorageError.Code:
		c.board.noteStorage(c.logger, op, err)
	}
}

// SendSyncStatus sends req; the StatusSynced goes to replyTo once the
// actor has handled everything sent to it before.
func (c *Client) SendSyncStatus(req *SyncStatus, replyTo *actor.PID) {
	c.sendFrom(req, replyTo)
}

// ListOffset answers ListOffsets for ts (-2 earliest, -1 latest, -3 the
// largest timestamp, or a timestamp) on the caller's goroutine, from the
// last published status. currentLeaderEpoch NoLeaderEpochCheck skips
// fencing.
func (c *Client) ListOffset(ts int64, currentLeaderEpoch int32) ListOffsetResult {
	return c.ListOffsetAt(c.board.status.Load(), ts, currentLeaderEpoch)
}

// ListOffsetAt is ListOffset from st, a status from StatusSynced (nil: the
// partition has no log, NOT_LEADER_OR_FOLLOWER).
func (c *Client) ListOffsetAt(st *Status, ts int64, currentLeaderEpoch int32) ListOffsetResult {
	if code := c.board.stoppedCode(); code != 0 {
		return ListOffsetResult{ErrorCode: code, Offset: -1, Timestamp: -1, LeaderEpoch: -1}
	}
	res := listOffset(c.log, st, ts, currentLeaderEpoch)
	if ts >= 0 { // only a timestamp lookup reads the log
		c.noteRead(storageLookup, res.ErrorCode, res.storageErr)
	}
	return res
}

// EndOffsetForEpoch answers OffsetForLeaderEpoch on the caller's
// goroutine. currentLeaderEpoch NoLeaderEpochCheck skips fencing.
func (c *Client) EndOffsetForEpoch(epoch, currentLeaderEpoch int32) EpochEndResult {
	if code := c.board.stoppedCode(); code != 0 {
		return EpochEndResult{ErrorCode: code, LeaderEpoch: -1, EndOffset: -1}
	}
	return endOffsetForEpoch(c.log, c.board.status.Load(), epoch, currentLeaderEpoch)
}

// SendHandOver asks the leader to prepare a planned move of its
// leadership (see HandOver); the HandOverReady goes to replyTo. A gone
// actor answers nothing: the caller bounds its wait.
func (c *Client) SendHandOver(req *HandOver, replyTo *actor.PID) {
	c.sendFrom(req, replyTo)
}

// CancelHandOver calls off a rebalance's hand-over (see HandOverCancel).
func (c *Client) CancelHandOver(id uint64) { c.send(&HandOverCancel{ID: id}) }

// ISRChangeRefused tells the leader that its ISR proposal at those epochs
// was refused.
func (c *Client) ISRChangeRefused(leaderEpoch, partitionEpoch int32) {
	c.send(&ISRChangeRefused{LeaderEpoch: leaderEpoch, PartitionEpoch: partitionEpoch})
}
