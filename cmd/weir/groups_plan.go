package main

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// resetKind is the scenario of `weir groups reset-offsets`.
type resetKind int

const (
	resetEarliest  resetKind = iota + 1 // --to-earliest
	resetLatest                         // --to-latest
	resetToOffset                       // --to-offset N
	resetShiftBy                        // --shift-by N
	resetToCurrent                      // --to-current
	resetToTime                         // --to-datetime, --by-duration: resolved to a millisecond time
	resetFromFile                       // --from-file FILE
)

// resetSpec is the scenario and its number: the offset (--to-offset), the
// shift (--shift-by) or the Unix millisecond time (resetToTime).
type resetSpec struct {
	kind resetKind
	n    int64
}

// partitionOffsets are what the plan of one partition is computed from.
type partitionOffsets struct {
	topic     string
	partition int32
	// committed is the group's committed offset, -1 for none.
	committed int64
	// start and end are the log start and end offsets.
	start, end int64
	// atTime (resetToTime) is the first offset whose record's timestamp is
	// at or after the time: end (or -1) when there is none.
	atTime int64
	// requested (resetFromFile) is the offset the file gives.
	requested int64
}

// plannedOffset is one partition's new offset.
type plannedOffset struct {
	topic     string
	partition int32
	offset    int64
	// committed is the group's committed offset before the reset, -1 for
	// none.
	committed int64
}

// resetPlan is the new offsets of one group, in topic and partition order,
// and the warnings computing them raised, in Kafka's words.
type resetPlan struct {
	offsets  []plannedOffset
	warnings []string
}

// planReset computes the new offset of each partition. As Kafka's tool
// does, --to-offset, --shift-by and --from-file results are held within
// [start, end] (with a warning when moved), --shift-by needs a committed
// offset, --to-current keeps the committed offset and takes the log end
// where there is none, and a time past the last record takes the log end
// (with a warning).
func planReset(spec resetSpec, parts []partitionOffsets) (resetPlan, error) {
	var plan resetPlan
	for _, p := range parts {
		var at int64
		switch spec.kind {
		case resetEarliest:
			at = p.start
		case resetLatest:
			at = p.end
		case resetToOffset:
			at = plan.checkRange(p, spec.n)
		case resetShiftBy:
			if p.committed < 0 {
				return resetPlan{}, fmt.Errorf("cannot shift offset for partition %s-%d since there is no current committed offset", p.topic, p.partition)
			}
			at = plan.checkRange(p, addSaturating(p.committed, spec.n))
		case resetToCurrent:
			at = p.committed
			if at < 0 {
				at = p.end
			}
		case resetToTime:
			at = p.atTime
			if at < 0 || at >= p.end {
				plan.warnings = append(plan.warnings, fmt.Sprintf("Partition %d from topic %s is empty. Falling back to latest known offset.", p.partition, p.topic))
				at = max(at, p.end)
			}
		case resetFromFile:
			at = plan.checkRange(p, p.requested)
		default:
			return resetPlan{}, fmt.Errorf("reset scenario %d unknown", spec.kind)
		}
		plan.offsets = append(plan.offsets, plannedOffset{topic: p.topic, partition: p.partition, offset: at, committed: p.committed})
	}
	slices.SortFunc(plan.offsets, func(a, b plannedOffset) int {
		if c := strings.Compare(a.topic, b.topic); c != 0 {
			return c
		}
		return int(a.partition) - int(b.partition)
	})
	return plan, nil
}

// checkRange returns offset held within p's log, noting a warning as
// Kafka's checkOffsetsRange logs it when the offset had to move.
func (plan *resetPlan) checkRange(p partitionOffsets, offset int64) int64 {
	switch {
	case offset > p.end:
		plan.warnings = append(plan.warnings, fmt.Sprintf("New offset (%d) is higher than latest offset for topic partition %s-%d. Value will be set to %d", offset, p.topic, p.partition, p.end))
		return p.end
	case offset < p.start:
		plan.warnings = append(plan.warnings, fmt.Sprintf("New offset (%d) is lower than earliest offset for topic partition %s-%d. Value will be set to %d", offset, p.topic, p.partition, p.start))
		return p.start
	}
	return offset
}

// addSaturating returns a+b, held at the int64 limits.
func addSaturating(a, b int64) int64 {
	switch {
	case b > 0 && a > math.MaxInt64-b:
		return math.MaxInt64
	case b < 0 && a < math.MinInt64-b:
		return math.MinInt64
	}
	return a + b
}
