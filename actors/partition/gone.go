package partition

import (
	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kerr"
)

// A partition actor that has stopped still answers: its mailbox
// (actors/stopped) hands every request queued at the stop, or sent
// later, to answerGone, and the Client sends through the actor's process,
// not its PID, so nothing it sends reaches dead letters. The code is the
// one Kafka's ReplicaManager gives for a partition it no longer hosts:
// NOT_LEADER_OR_FOLLOWER while the topic exists (the replica moved away),
// UNKNOWN_TOPIC_OR_PARTITION once it is deleted (Client.StopDeleted).

// goneCode is the code the stopped actor answers with (set before the
// stop; 0 means NOT_LEADER_OR_FOLLOWER).
func (b *Board) goneCode() int16 {
	if c := int16(b.gone.Load()); c != 0 {
		return c
	}
	return kerr.NotLeaderForPartition.Code
}

// stoppedCode is the code reads on the caller's goroutine answer once the
// actor has stopped, 0 while it runs.
func (b *Board) stoppedCode() int16 {
	if !b.stopped.Load() {
		return 0
	}
	return b.goneCode()
}

// answerGone is the stopped actor's answer to msg (stopped.Answer).
func (b *Board) answerGone(msg any, sender *actor.PID) (*actor.PID, any) {
	code := b.goneCode()
	switch m := msg.(type) {
	case *AppendBatches:
		return sender, &AppendBatchesResult{
			ID: m.ID, Acks: m.Acks, ErrorCode: code,
			BaseOffset: -1, LogAppendTimeMs: -1, LogStartOffset: -1,
			CurrentLeader: LeaderHint{LeaderID: -1, LeaderEpoch: -1},
		}
	case *ReadRecords:
		return sender, goneRead(code)
	case *WatchHighWatermark:
		// The watcher reads again and finds the stopped code there.
		return m.ReplyTo, &HighWatermarkReached{ID: m.ID, HighWatermark: -1}
	case *DeleteRecords:
		return sender, &DeleteRecordsResult{ID: m.ID, ErrorCode: code, LowWatermark: -1}
	case *DescribeProducers:
		return sender, &DescribeProducersResult{ID: m.ID, ErrorCode: code}
	case *SyncStatus:
		// A nil status: the caller's ListOffsetAt answers the stopped code.
		return sender, &StatusSynced{ID: m.ID}
	case *AppendReplicated:
		return sender, gonePosition(m.ID, code)
	case *TruncateDiverging:
		return sender, gonePosition(m.ID, code)
	case *ResetToLeaderStart:
		return sender, gonePosition(m.ID, code)
	}
	return nil, nil
}

// goneRead is a read's answer from a stopped partition.
func goneRead(code int16) *ReadRecordsResult {
	return &ReadRecordsResult{ErrorCode: code, ErrorMessage: kerr.ErrorForCode(code).Error(),
		HighWatermark: -1, LogStartOffset: -1, LastStableOffset: -1}
}

// gonePosition is a replica fetcher's answer from a stopped partition.
func gonePosition(id uint64, code int16) *ReplicaPosition {
	return &ReplicaPosition{ID: id, ErrorCode: code, FetchOffset: -1, LastFetchedEpoch: -1, LeaderEpoch: -1}
}
