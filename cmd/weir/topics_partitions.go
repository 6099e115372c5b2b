package main

import (
	"errors"
	"fmt"
	"math"
)

// partitionGrowth is what `weir topics add-partitions` asks for: a new
// total (--partitions, as kafka-topics.sh --alter --partitions) or a
// number to add (-n/--num, as rpk topic add-partitions).
type partitionGrowth struct {
	// byTotal says total was given; otherwise add was.
	byTotal    bool
	total, add int
}

// newPartitionGrowth checks the flags: exactly one of --partitions (total,
// given when totalSet) and --num (add, given when addSet), at least 1. A
// mistake is a command-line one.
func newPartitionGrowth(total int, totalSet bool, add int, addSet bool) (partitionGrowth, error) {
	switch {
	case totalSet && addSet:
		return partitionGrowth{}, errors.New("give one of --partitions (the new total) and --num (how many to add), not both")
	case !totalSet && !addSet:
		return partitionGrowth{}, errors.New("give --partitions N (the new total) or --num N (how many to add)")
	case totalSet && (total < 1 || total > math.MaxInt32):
		return partitionGrowth{}, fmt.Errorf("--partitions %d, want a total of at least 1", total)
	case addSet && (add < 1 || add > math.MaxInt32):
		return partitionGrowth{}, fmt.Errorf("--num %d, want at least 1 partition to add", add)
	}
	return partitionGrowth{byTotal: totalSet, total: total, add: add}, nil
}

// target returns the topic's new partition count given its current one,
// or an error in weir's words when that would not grow the topic.
func (g partitionGrowth) target(topic string, current int) (int, error) {
	if !g.byTotal {
		if current+g.add > math.MaxInt32 {
			return 0, fmt.Errorf("topic %q has %d partitions; adding %d would pass the limit of %d", topic, current, g.add, math.MaxInt32)
		}
		return current + g.add, nil
	}
	if g.total <= current {
		return 0, fmt.Errorf("topic %q already has %d partitions: --partitions is the new total and must be more than %d (use --num to give how many to add); partitions cannot be removed", topic, current, current)
	}
	return g.total, nil
}
