package chaos

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Report is what Check found. A clean run has every list empty.
type Report struct {
	// Acked and Read count the acknowledged records and those read back.
	Acked, Read int
	// Unacked counts records read whose send no acknowledgement names
	// (the send failed or its outcome was lost): allowed.
	Unacked int
	// Lost are acknowledged records not read back at all.
	Lost []Ack
	// Duplicated are values read at more than one place.
	Duplicated []Duplicate
	// Moved are acknowledged records read back, but not at the partition
	// and offset they were acknowledged at (Jepsen's inconsistent
	// offsets).
	Moved []Moved
	// Reordered are records of one producer read in a partition after a
	// record that producer sent later.
	Reordered []Reorder
	// Backwards are records read at an offset not above the previous
	// record read from the same partition.
	Backwards []Record
	// Foreign are records whose value no producer of this package makes.
	Foreign []Record
}

// Duplicate is a value read at several places.
type Duplicate struct {
	Value string
	At    []Record
}

// Moved is an acknowledged record read elsewhere.
type Moved struct {
	Ack Ack
	At  Record
}

// Reorder is a pair of one producer's records in one partition: Later
// was sent after Earlier but sits before it.
type Reorder struct {
	Earlier, Later Record
}

// OK reports whether nothing was lost, duplicated, moved or reordered.
func (r Report) OK() bool {
	return len(r.Lost) == 0 && len(r.Duplicated) == 0 && len(r.Moved) == 0 &&
		len(r.Reordered) == 0 && len(r.Backwards) == 0 && len(r.Foreign) == 0
}

// LostValues returns the values of the lost records, sorted.
func (r Report) LostValues() []string {
	out := make([]string, 0, len(r.Lost))
	for _, a := range r.Lost {
		out = append(out, a.Value)
	}
	slices.Sort(out)
	return out
}

// reportLimit bounds the examples String lists per kind.
const reportLimit = 20

func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d acknowledged, %d read (%d not acknowledged): %d lost, %d duplicated, %d moved, %d reordered, %d backwards, %d foreign",
		r.Acked, r.Read, r.Unacked, len(r.Lost), len(r.Duplicated), len(r.Moved), len(r.Reordered), len(r.Backwards), len(r.Foreign))
	list := func(kind string, n int, item func(i int) string) {
		for i := range min(n, reportLimit) {
			fmt.Fprintf(&b, "\n  %s: %s", kind, item(i))
		}
		if n > reportLimit {
			fmt.Fprintf(&b, "\n  %s: ... %d more", kind, n-reportLimit)
		}
	}
	list("lost", len(r.Lost), func(i int) string {
		a := r.Lost[i]
		return fmt.Sprintf("%s (acknowledged at p%d@%d)", a.Value, a.Partition, a.Offset)
	})
	list("duplicated", len(r.Duplicated), func(i int) string {
		d := r.Duplicated[i]
		var at []string
		for _, rec := range d.At {
			at = append(at, fmt.Sprintf("p%d@%d", rec.Partition, rec.Offset))
		}
		return fmt.Sprintf("%s at %s", d.Value, strings.Join(at, ", "))
	})
	list("moved", len(r.Moved), func(i int) string {
		m := r.Moved[i]
		return fmt.Sprintf("%s acknowledged at p%d@%d, read at p%d@%d", m.Ack.Value, m.Ack.Partition, m.Ack.Offset, m.At.Partition, m.At.Offset)
	})
	list("reordered", len(r.Reordered), func(i int) string {
		o := r.Reordered[i]
		return fmt.Sprintf("p%d: %s@%d sent after %s@%d", o.Later.Partition, o.Later.Value, o.Later.Offset, o.Earlier.Value, o.Earlier.Offset)
	})
	list("backwards", len(r.Backwards), func(i int) string {
		rec := r.Backwards[i]
		return fmt.Sprintf("p%d@%d %s", rec.Partition, rec.Offset, rec.Value)
	})
	list("foreign", len(r.Foreign), func(i int) string {
		rec := r.Foreign[i]
		return fmt.Sprintf("p%d@%d %q", rec.Partition, rec.Offset, rec.Value)
	})
	return b.String()
}

// Check compares what the producers had acknowledged with what was read
// back: per partition, every acknowledged record present exactly once, at
// the offset it was acknowledged at, and each producer's records in the
// order it sent them (values from Value carry the send order). Records
// read that were never acknowledged are counted, not faulted: their sends
// failed or timed out, so they may or may not have been written.
func Check(acks []Ack, log Log) Report {
	r := Report{Acked: len(acks), Read: log.Len()}
	where := map[string][]Record{}
	for _, p := range slices.Sorted(maps.Keys(log)) {
		recs := log[p]
		last := map[string]Record{} // by producer: the record read last
		for i, rec := range recs {
			if i > 0 && rec.Offset <= recs[i-1].Offset {
				r.Backwards = append(r.Backwards, rec)
			}
			where[rec.Value] = append(where[rec.Value], rec)
			producer, seq, ok := ParseValue(rec.Value)
			if !ok {
				r.Foreign = append(r.Foreign, rec)
				continue
			}
			if len(where[rec.Value]) > 1 {
				continue // a duplicate, reported as such
			}
			if prev, ok := last[producer]; ok {
				if _, prevSeq, _ := ParseValue(prev.Value); seq < prevSeq {
					r.Reordered = append(r.Reordered, Reorder{Earlier: prev, Later: rec})
				}
			}
			last[producer] = rec
		}
	}
	ackedValues := make(map[string]bool, len(acks))
	for _, a := range acks {
		ackedValues[a.Value] = true
		at := where[a.Value]
		if len(at) == 0 {
			r.Lost = append(r.Lost, a)
			continue
		}
		if !slices.ContainsFunc(at, func(rec Record) bool { return rec.Partition == a.Partition && rec.Offset == a.Offset }) {
			r.Moved = append(r.Moved, Moved{Ack: a, At: at[0]})
		}
	}
	for _, v := range slices.Sorted(maps.Keys(where)) {
		if at := where[v]; len(at) > 1 {
			r.Duplicated = append(r.Duplicated, Duplicate{Value: v, At: at})
		}
		if !ackedValues[v] {
			r.Unacked++
		}
	}
	slices.SortFunc(r.Lost, func(a, b Ack) int { return strings.Compare(a.Value, b.Value) })
	return r
}
