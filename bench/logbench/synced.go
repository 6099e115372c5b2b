package logbench

import (
	"fmt"
	"strconv"
	"strings"
)

// syncedTag opens every line that reports a durable append.
const syncedTag = "synced"

// Synced reports one durable append: with Config.ReportSynced, Run writes
// it as the line "synced <partition> <firstOffset> <lastOffset> <writer>
// <seq>" once the log has said the append is flushed, never before.
type Synced struct {
	Partition   int32
	FirstOffset int64 // base offset of the appended batch
	LastOffset  int64 // last offset of the appended batch
	Writer      int32
	Seq         int64 // the writer's append number: Key.Seq of its records
}

// AppendTo appends the line form of s, without a line ending, to dst.
func (s Synced) AppendTo(dst []byte) []byte {
	dst = append(dst, syncedTag...)
	for _, v := range [...]int64{int64(s.Partition), s.FirstOffset, s.LastOffset, int64(s.Writer), s.Seq} {
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, v, 10)
	}
	return dst
}

// String returns the line form of s.
func (s Synced) String() string { return string(s.AppendTo(nil)) }

// ParseSynced decodes a line written for a Synced (a trailing "\n" or
// "\r\n" is ignored). It fails on any other line.
func ParseSynced(line string) (Synced, error) {
	fields := strings.Fields(line)
	if len(fields) != 6 || fields[0] != syncedTag {
		return Synced{}, fmt.Errorf("logbench: not a synced line: %q", line)
	}
	var v [5]int64
	for i, f := range fields[1:] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil || n < 0 {
			return Synced{}, fmt.Errorf("logbench: synced line %q: field %d is not a count", line, i+1)
		}
		v[i] = n
	}
	s := Synced{Partition: int32(v[0]), FirstOffset: v[1], LastOffset: v[2], Writer: int32(v[3]), Seq: v[4]}
	if int64(s.Partition) != v[0] || int64(s.Writer) != v[3] || s.LastOffset < s.FirstOffset {
		return Synced{}, fmt.Errorf("logbench: synced line %q: fields out of range", line)
	}
	return s, nil
}
