package cluster

import (
	"fmt"
	"math"

	"golang.org/x/sys/unix"
)

// The process's file descriptors are shared by client connections, the
// segment files the log keeps open (log.ManagerConfig.MaxOpenFiles) and a
// fixed reserve for everything else: index, checkpoint, snapshot and
// quorum-state files opened for a moment, segments in use beyond the
// cache, directory syncs, the metadata log, the listener, the runtime's
// poller. fileBudget divides the limit so that connections can never take
// the descriptors the broker needs for its own files.
const (
	// fileReserve is the descriptors kept for the broker's own short-lived
	// files; a quarter of the limit when the limit is small.
	fileReserve = 256
	// maxSegmentFiles is the segment-file cache at a generous limit (the
	// log's own default).
	maxSegmentFiles = 4096
	// minSegmentFiles is the smallest segment-file cache the budget gives,
	// however low the limit.
	minSegmentFiles = 32
)

// filePlan is the division of the open-file limit.
type filePlan struct {
	// Limit is RLIMIT_NOFILE's soft limit (Go raises it to the hard
	// limit at start-up).
	Limit uint64
	// Connections is max.connections.
	Connections int
	// SegmentFiles is the log's open segment-file budget.
	SegmentFiles int
	// Reserve is what is left for everything else.
	Reserve int
	// Warning is set when a configured max.connections leaves the broker
	// fewer descriptors than it needs; the plan then still holds.
	Warning string
}

// planFiles divides limit. Unset (configured < 0), max.connections gets
// what the reserve and the segment-file budget leave: the segment files
// get half of what remains after the reserve, at most maxSegmentFiles, so
// at a limit of 1024 it is 384 connections and 384 segment files, at
// 65536 it is 61184 and 4096. A configured max.connections is kept as is
// and the segment files get what is left, at least minSegmentFiles.
func planFiles(limit uint64, configured int64) filePlan {
	l := int64(min(limit, math.MaxInt32))
	reserve := min(fileReserve, l/4)
	free := l - reserve
	p := filePlan{Limit: limit, Reserve: int(reserve)}
	if configured < 0 {
		files := max(min(maxSegmentFiles, free/2), min(minSegmentFiles, free))
		p.SegmentFiles, p.Connections = int(files), int(max(free-files, 0))
		return p
	}
	p.Connections = int(min(configured, math.MaxInt32))
	files := min(maxSegmentFiles, free-configured)
	if files < minSegmentFiles {
		files = minSegmentFiles
		p.Warning = fmt.Sprintf("max.connections %d with %d segment files and %d reserved exceeds the open-file limit %d: "+
			"clients can exhaust the broker's file descriptors", configured, files, reserve, limit)
	}
	p.SegmentFiles = int(files)
	return p
}

// openFileLimit returns the process's RLIMIT_NOFILE soft limit.
func openFileLimit() (uint64, error) {
	var r unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &r); err != nil {
		return 0, fmt.Errorf("cluster: read the open-file limit: %w", err)
	}
	return r.Cur, nil
}
