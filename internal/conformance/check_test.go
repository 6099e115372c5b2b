package conformance

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// header is one record header.
type header struct {
	Key   string
	Value []byte
}

// location is where a record is stored.
type location struct {
	Partition int32
	Offset    int64
}

// record is a record as produced (Partition and Offset -1 until known) or
// as consumed.
type record struct {
	Partition int32
	Offset    int64
	Key       []byte
	Value     []byte
	Headers   []header
	// Timestamp is in milliseconds since the epoch; -1 in a produced
	// record means the client stamps it (see checkOptions).
	Timestamp int64
	// TimestampType is 0 for CreateTime, 1 for LogAppendTime, -1 when the
	// client does not say.
	TimestampType int8
}

// checkOptions are the expectations not carried by the produced records.
type checkOptions struct {
	partitions int32
	// tsLo and tsHi bound the timestamps of produced records whose
	// Timestamp is -1; -1 when there are none.
	tsLo, tsHi int64
	// unordered skips the check that records of a partition keep their
	// produce order (acks=0, see driver.defaultAcks); offsets are still
	// checked.
	unordered bool
}

// maxProblems bounds the problems one check reports in detail.
const maxProblems = 20

// problems collects check failures, keeping the first few in detail.
type problems struct {
	count int
	lines []string
}

func (p *problems) addf(format string, args ...any) {
	p.count++
	if len(p.lines) < maxProblems {
		p.lines = append(p.lines, fmt.Sprintf(format, args...))
	}
}

// reportProblems fails t with what p found, if anything.
func reportProblems(t *testing.T, what string, p *problems) {
	t.Helper()
	if p.count == 0 {
		return
	}
	more := ""
	if p.count > len(p.lines) {
		more = fmt.Sprintf("\n  ... and %d more", p.count-len(p.lines))
	}
	t.Errorf("%s: %d problems:\n  %s%s", what, p.count, strings.Join(p.lines, "\n  "), more)
}

// checkRecords compares the records consumed (got, in the order each
// partition delivered them) with those produced (want, in produce order):
// each produced record consumed exactly once and nothing else; key, value,
// headers and timestamp as produced; offsets contiguous from 0 in each
// partition and delivered in offset order; produce order kept within each
// partition; and the partition and offset the producer reported, if any.
func checkRecords(want, got []record, opts checkOptions) *problems {
	p := &problems{}
	index := make(map[string]int, len(want))
	for i, w := range want {
		index[string(w.Key)] = i
	}
	seen := make([]bool, len(want))
	nextOffset := make(map[int32]int64)
	lastIndex := make(map[int32]int)
	for _, g := range got {
		where := fmt.Sprintf("partition %d offset %d", g.Partition, g.Offset)
		if g.Partition < 0 || g.Partition >= opts.partitions {
			p.addf("%s: partition out of range [0,%d)", where, opts.partitions)
			continue
		}
		if next := nextOffset[g.Partition]; g.Offset != next {
			p.addf("%s: offset out of sequence, want %d (offsets contiguous from 0, in order)", where, next)
		}
		nextOffset[g.Partition] = g.Offset + 1
		i, ok := index[string(g.Key)]
		if !ok {
			p.addf("%s: unknown key %q", where, g.Key)
			continue
		}
		if seen[i] {
			p.addf("%s: key %q consumed twice", where, g.Key)
			continue
		}
		seen[i] = true
		if last, ok := lastIndex[g.Partition]; ok && i < last && !opts.unordered {
			p.addf("%s: record %d after record %d: produce order not kept", where, i, last)
		}
		lastIndex[g.Partition] = i
		compareRecord(p, where, want[i], g, opts)
	}
	missing := 0
	for i, s := range seen {
		if !s {
			if missing < 3 {
				p.addf("record %d (key %q, acknowledged at partition %d offset %d) not consumed",
					i, want[i].Key, want[i].Partition, want[i].Offset)
			}
			missing++
		}
	}
	if missing > 0 {
		p.addf("%d of %d produced records not consumed (%d consumed)", missing, len(want), len(got))
	}
	return p
}

// compareRecord compares one consumed record with the produced one.
func compareRecord(p *problems, where string, w, g record, opts checkOptions) {
	if w.Partition >= 0 && (w.Partition != g.Partition || w.Offset != g.Offset) {
		p.addf("%s: key %q was acknowledged at partition %d offset %d", where, g.Key, w.Partition, w.Offset)
	}
	if !bytes.Equal(w.Value, g.Value) {
		p.addf("%s: key %q: value %q, want %q", where, g.Key, abbrev(g.Value), abbrev(w.Value))
	}
	if !equalHeaders(w.Headers, g.Headers) {
		p.addf("%s: key %q: headers %s, want %s", where, g.Key, formatHeaders(g.Headers), formatHeaders(w.Headers))
	}
	switch {
	case w.Timestamp >= 0 && g.Timestamp != w.Timestamp:
		p.addf("%s: key %q: timestamp %d, want %d", where, g.Key, g.Timestamp, w.Timestamp)
	case w.Timestamp < 0 && (g.Timestamp < opts.tsLo || g.Timestamp > opts.tsHi):
		p.addf("%s: key %q: timestamp %d, want one set while producing, in [%d,%d]", where, g.Key, g.Timestamp, opts.tsLo, opts.tsHi)
	}
	if g.TimestampType > 0 {
		p.addf("%s: key %q: timestamp type %d, want 0 (CreateTime)", where, g.Key, g.TimestampType)
	}
}

func equalHeaders(a, b []header) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Key != b[i].Key || !bytes.Equal(a[i].Value, b[i].Value) {
			return false
		}
	}
	return true
}

func formatHeaders(hs []header) string {
	parts := make([]string, len(hs))
	for i, h := range hs {
		parts[i] = fmt.Sprintf("%q=%q", h.Key, h.Value)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// abbrev shortens a value for a report.
func abbrev(b []byte) []byte {
	if len(b) > 40 {
		return append(b[:40:40], "..."...)
	}
	return b
}
