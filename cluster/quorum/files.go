package quorum

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/weirmq/weir/log/batch"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// quorumStateFile holds the raft hard state, beside the log's segments.
const quorumStateFile = "quorum-state"

// checkpointSuffix ends the name of a snapshot file:
// "<index, 20 digits>-<term, 10 digits>.checkpoint", as KRaft names its
// snapshots (KRaft's number is the end offset; ours is the raft index the
// snapshot covers, inclusive).
const checkpointSuffix = ".checkpoint"

// quorumState is the JSON of the quorum-state file, shaped like KRaft's
// (leaderEpoch, votedId, data_version) plus raft's commit index.
type quorumState struct {
	LeaderEpoch uint64 `json:"leaderEpoch"`
	VotedID     int64  `json:"votedId"` // node id voted for in LeaderEpoch, -1 for none
	Commit      uint64 `json:"commitIndex"`
	DataVersion int    `json:"data_version"`
}

func encodeHardState(hs *pb.HardState) []byte {
	qs := quorumState{LeaderEpoch: hs.GetTerm(), VotedID: -1, Commit: hs.GetCommit()}
	if v := hs.GetVote(); v != 0 {
		qs.VotedID = int64(NodeIDOf(v))
	}
	b, _ := json.Marshal(qs) // cannot fail: plain fields
	return append(b, '\n')
}

func decodeHardState(path string, b []byte) (*pb.HardState, error) {
	var qs quorumState
	if err := json.Unmarshal(b, &qs); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrCorrupt, path, err)
	}
	if qs.DataVersion != 0 || qs.VotedID < -1 {
		return nil, fmt.Errorf("%w: %s: data_version %d, votedId %d", ErrCorrupt, path, qs.DataVersion, qs.VotedID)
	}
	hs := &pb.HardState{Term: new(qs.LeaderEpoch), Vote: new(uint64(0)), Commit: new(qs.Commit)}
	if qs.VotedID >= 0 {
		hs.Vote = new(RaftID(int32(qs.VotedID)))
	}
	return hs, nil
}

// checkpointName is the file name of the snapshot at index and term.
func checkpointName(index, term uint64) string {
	return fmt.Sprintf("%020d-%010d%s", index, term, checkpointSuffix)
}

// parseCheckpointName returns the index a checkpoint file name holds.
func parseCheckpointName(name string) (uint64, bool) {
	base, ok := strings.CutSuffix(name, checkpointSuffix)
	if !ok {
		return 0, false
	}
	idx, term, ok := strings.Cut(base, "-")
	if !ok || len(idx) != 20 || len(term) != 10 {
		return 0, false
	}
	i, err := strconv.ParseUint(idx, 10, 64)
	if err != nil {
		return 0, false
	}
	if _, err := strconv.ParseUint(term, 10, 64); err != nil {
		return 0, false
	}
	return i, true
}

// encodeCheckpoint returns a checkpoint file's content: a batch whose one
// record carries the snapshot's metadata (index, term, conf state) in a
// header, then the snapshot data (record batches).
func encodeCheckpoint(snap *pb.Snapshot) ([]byte, error) {
	meta, err := proto.Marshal(snap.GetMetadata())
	if err != nil {
		return nil, fmt.Errorf("quorum: encode checkpoint: %w", err)
	}
	rec := kmsg.Record{Headers: []kmsg.Header{{Key: headerSnapshot, Value: meta}}}
	head, err := batch.Build(batchOptions(0, snap.GetMetadata().GetTerm()), []kmsg.Record{rec})
	if err != nil {
		return nil, fmt.Errorf("quorum: encode checkpoint: %w", err)
	}
	return append(head, snap.GetData()...), nil
}

// decodeCheckpoint parses encodeCheckpoint's bytes, checking every batch's
// CRC.
func decodeCheckpoint(path string, b []byte) (*pb.Snapshot, error) {
	batches, err := batch.Split(b)
	if err != nil || len(batches) == 0 {
		return nil, fmt.Errorf("%w: %s: %w", ErrCorrupt, path, errors.Join(err, errors.New("no batches")))
	}
	for _, bb := range batches {
		if _, err := batch.Validate(bb); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrCorrupt, path, err)
		}
	}
	recs, err := batch.Records(batches[0], 1<<20)
	if err != nil || len(recs) != 1 || len(recs[0].Headers) != 1 || recs[0].Headers[0].Key != headerSnapshot {
		return nil, fmt.Errorf("%w: %s: no snapshot header", ErrCorrupt, path)
	}
	meta := &pb.SnapshotMetadata{}
	if err := proto.Unmarshal(recs[0].Headers[0].Value, meta); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrCorrupt, path, err)
	}
	if meta.ConfState == nil {
		meta.ConfState = &pb.ConfState{}
	}
	data := b[len(batches[0]):]
	return &pb.Snapshot{Metadata: meta, Data: append([]byte(nil), data...)}, nil
}

// isNotExist reports a missing file.
func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
