package partitiontest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/log"
	"github.com/weirmq/weir/log/batch"
)

// entry is one record of a replica's log: its offset, its value (the
// test's records are unique values without keys) and the leader epoch of
// its batch.
type entry struct {
	offset int64
	value  string
	epoch  int32
}

// maxBatchBytes bounds a decompressed records section when reading logs.
const maxBatchBytes = 16 << 20

// replicaLog reads nd's log of one partition from its data directory,
// while the node runs: every record of every segment, in offset order.
// A batch cut short at the end of the last segment (the node was writing
// it) ends the log; any other damage is an error.
func (nd *node) replicaLog(topic string, part int32) ([]entry, error) {
	dir := filepath.Join(nd.data, fmt.Sprintf("%s-%d", topic, part))
	names, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("node %d: %w", nd.id, err)
	}
	var segs []string
	for _, n := range names {
		if strings.HasSuffix(n.Name(), ".log") {
			segs = append(segs, filepath.Join(dir, n.Name()))
		}
	}
	slices.Sort(segs) // 20-digit base offsets sort as numbers
	var out []entry
	for i, seg := range segs {
		err := log.ScanLogFile(log.OSFS{}, seg, func(_ int64, b []byte, verr error) error {
			if verr != nil {
				return verr
			}
			base, epoch := batch.BaseOffset(b), batch.PartitionLeaderEpoch(b)
			return batch.ForEachRecord(b, maxBatchBytes, func(r *kmsg.Record) error {
				out = append(out, entry{offset: base + int64(r.OffsetDelta), value: string(r.Value), epoch: epoch})
				return nil
			})
		})
		if err != nil && !(i == len(segs)-1 && errors.Is(err, batch.ErrTruncated)) {
			return nil, fmt.Errorf("node %d: %w", nd.id, err)
		}
	}
	return out, nil
}

// values returns the values of entries as a set.
func values(es []entry) map[string]int64 {
	m := make(map[string]int64, len(es))
	for _, e := range es {
		m[e.value] = e.offset
	}
	return m
}

// firstDifference returns the index of the first entry where a and b
// differ, or -1 when they are equal.
func firstDifference(a, b []entry) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}
