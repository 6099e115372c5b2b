package log

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/weirmq/weir/log/batch"
)

// File name suffixes, as Kafka names them.
const (
	logSuffix       = ".log"
	indexSuffix     = ".index"
	timeIndexSuffix = ".timeindex"
	cleanedSuffix   = ".cleaned"
	swapSuffix      = ".swap"
	deletedSuffix   = ".deleted"
)

// segmentFileName is the 20-digit base offset followed by suffix.
func segmentFileName(base int64, suffix string) string {
	return fmt.Sprintf("%020d%s", base, suffix)
}

// parseSegmentFileName returns the base offset of a segment file name with
// the given suffix.
func parseSegmentFileName(name, suffix string) (int64, bool) {
	digits, ok := strings.CutSuffix(name, suffix)
	if !ok || len(digits) != 20 {
		return 0, false
	}
	base, err := strconv.ParseInt(digits, 10, 64)
	return base, err == nil && base >= 0
}

// segment is one .log file and its indexes. Its fields are guarded by the
// owning Log's mutex.
type segment struct {
	base      int64
	logPath   string
	size      int64 // bytes of whole batches in the .log file
	synced    int64 // prefix of the .log known to be durable
	index     *indexFile
	timeIndex *indexFile
	loaded    bool  // index and timeIndex hold the file's entries
	maxTs     int64 // largest batch max timestamp, -1 if none
	maxTsOff  int64 // last offset of the batch holding maxTs
	tsKnown   bool  // maxTs is computed
	firstTs   int64 // max timestamp of the first batch (segment.ms), -1 unknown
	created   int64 // wall time in ms when this process created or loaded it
	sinceIdx  int64 // bytes appended since the last index entry
	lastUse   int64 // manager tick of the last access, for idle unloading
}

func newSegment(dir string, base int64) *segment {
	s := &segment{
		base:     base,
		logPath:  filepath.Join(dir, segmentFileName(base, logSuffix)),
		maxTs:    -1,
		maxTsOff: base,
		firstTs:  -1,
	}
	s.index = &indexFile{path: filepath.Join(dir, segmentFileName(base, indexSuffix)), base: base, entrySize: indexEntrySize, size: -1}
	s.timeIndex = &indexFile{path: filepath.Join(dir, segmentFileName(base, timeIndexSuffix)), base: base, entrySize: timeIndexEntrySize, size: -1}
	return s
}

// fitsOffset reports whether offset can be indexed relative to the base.
func (s *segment) fitsOffset(offset int64) bool {
	return offset >= s.base && offset-s.base <= math.MaxInt32
}

// observe accounts one appended batch at pos in the in-memory indexes and
// timestamps, the way Kafka's LogSegment.append does: an index entry for the
// batch's last offset once more than indexInterval bytes were appended since
// the previous entry.
// b holds at least the batch header; size is the whole batch's size.
func (s *segment) observe(b []byte, pos, size int64, indexInterval int64) {
	maxTs, last := batch.MaxTimestamp(b), batch.LastOffset(b)
	if s.firstTs < 0 && s.size == 0 {
		s.firstTs = maxTs
	}
	if maxTs > s.maxTs {
		s.maxTs, s.maxTsOff = maxTs, last
	}
	if s.sinceIdx > indexInterval {
		s.index.appendOffset(last, pos)
		if t, _ := s.timeIndex.lastTime(); s.maxTs > t {
			s.timeIndex.appendTime(s.maxTs, s.maxTsOff)
		}
		s.sinceIdx = 0
	}
	s.sinceIdx += size
}

// sealTimeIndex appends the final (max timestamp, offset) entry when the
// segment stops being active, as Kafka does on roll.
func (s *segment) sealTimeIndex() {
	if t, _ := s.timeIndex.lastTime(); s.tsKnown && s.maxTs > t {
		s.timeIndex.appendTime(s.maxTs, s.maxTsOff)
	}
}

// resetIndexes drops every index entry before a rebuild.
func (s *segment) resetIndexes() {
	s.index.reset()
	s.timeIndex.reset()
	s.maxTs, s.maxTsOff, s.firstTs, s.sinceIdx = -1, s.base, -1, 0
	s.tsKnown, s.loaded = true, true
}
