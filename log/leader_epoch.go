package log

import (
	"fmt"
	"sort"
)

// EpochEntry is one line of the leader-epoch cache: the first offset written
// under a leader epoch.
type EpochEntry struct {
	Epoch       int32
	StartOffset int64
}

// epochCache is Kafka's LeaderEpochFileCache without the I/O: the entries,
// ascending in both epoch and start offset.
type epochCache struct {
	entries []EpochEntry
}

// latest returns the newest epoch, or -1.
func (c *epochCache) latest() int32 {
	if len(c.entries) == 0 {
		return -1
	}
	return c.entries[len(c.entries)-1].Epoch
}

// assign records that epoch starts at offset. It ignores an epoch not newer
// than the latest and reports whether the cache changed. An entry whose start
// offset is not below offset is replaced (a leader that wrote nothing).
func (c *epochCache) assign(epoch int32, offset int64) bool {
	if epoch < 0 || epoch <= c.latest() {
		return false
	}
	for len(c.entries) > 0 && c.entries[len(c.entries)-1].StartOffset >= offset {
		c.entries = c.entries[:len(c.entries)-1]
	}
	c.entries = append(c.entries, EpochEntry{Epoch: epoch, StartOffset: offset})
	return true
}

// endOffsetFor answers OffsetForLeaderEpoch as Kafka does: for the latest
// epoch, the log end offset; for an older epoch, the start offset of the next
// higher epoch, paired with the largest epoch <= the requested one; (-1, -1)
// when the requested epoch is unknown or newer than the latest.
func (c *epochCache) endOffsetFor(epoch int32, logEnd int64) (int32, int64) {
	if epoch < 0 || len(c.entries) == 0 {
		return -1, -1
	}
	if epoch == c.latest() {
		return epoch, logEnd
	}
	hi := sort.Search(len(c.entries), func(i int) bool { return c.entries[i].Epoch > epoch })
	if hi == len(c.entries) {
		return -1, -1
	}
	if hi == 0 {
		return epoch, c.entries[0].StartOffset
	}
	return c.entries[hi-1].Epoch, c.entries[hi].StartOffset
}

// truncateFromEnd drops entries starting at or after endOffset.
func (c *epochCache) truncateFromEnd(endOffset int64) bool {
	n := len(c.entries)
	for n > 0 && c.entries[n-1].StartOffset >= endOffset {
		n--
	}
	changed := n != len(c.entries)
	c.entries = c.entries[:n]
	return changed
}

// truncateFromStart drops entries wholly before startOffset and moves the
// entry covering it to start there.
func (c *epochCache) truncateFromStart(startOffset int64) bool {
	i := sort.Search(len(c.entries), func(i int) bool { return c.entries[i].StartOffset > startOffset })
	if i == 0 {
		return false
	}
	changed := i > 1 || c.entries[0].StartOffset != startOffset
	keep := c.entries[i-1]
	keep.StartOffset = startOffset
	c.entries = append([]EpochEntry{keep}, c.entries[i:]...)
	return changed
}

// encode writes the leader-epoch-checkpoint text: version 0, the count, then
// "epoch startOffset" lines.
func (c *epochCache) encode() []byte {
	b := fmt.Appendf(nil, "0\n%d\n", len(c.entries))
	for _, e := range c.entries {
		b = fmt.Appendf(b, "%d %d\n", e.Epoch, e.StartOffset)
	}
	return b
}

// decodeEpochCheckpoint parses a leader-epoch-checkpoint file.
func decodeEpochCheckpoint(path string, data []byte) (epochCache, error) {
	lines, err := checkpointLines(path, data, 2)
	if err != nil {
		return epochCache{}, err
	}
	var c epochCache
	for i, f := range lines {
		var e EpochEntry
		if _, err := fmt.Sscanf(f[0]+" "+f[1], "%d %d", &e.Epoch, &e.StartOffset); err != nil {
			return epochCache{}, fmt.Errorf("%w: %s: entry %d: %v", ErrCorrupt, path, i, err)
		}
		if n := len(c.entries); n > 0 && (e.Epoch <= c.entries[n-1].Epoch || e.StartOffset < c.entries[n-1].StartOffset) {
			return epochCache{}, fmt.Errorf("%w: %s: entry %d (%d %d) out of order", ErrCorrupt, path, i, e.Epoch, e.StartOffset)
		}
		c.entries = append(c.entries, e)
	}
	return c, nil
}
