package partitiontest

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// report logs the run's timeline and what the cut node answered.
func (r *cutRun) report(t *testing.T) {
	t.Helper()
	firstNew := r.firstNewAcks()
	for _, p := range r.vparts {
		nl, f := r.leaders[p], firstNew[p]
		t.Logf("partition %d: led by node %d (epoch %d) at the cut; node %d's metadata showed node %d leading it (epoch %d) at %s; the majority's producer had its first write of the new epoch acknowledged at %s",
			p, r.victim.id, r.before[p].epoch, nl.by, nl.leader, nl.epoch, r.since(nl.at), r.since(f.at))
	}
	fenced := "never seen"
	if !r.fencedAt.IsZero() {
		fenced = r.since(r.fencedAt)
	}
	t.Logf("node %d left the majority's broker list at %s; healed at %s; every ISR full again at %s",
		r.victim.id, fenced, r.since(r.healAt), r.since(r.rejoinedAt))
	t.Logf("acks=all to the cut node: %d tries, outcomes %s", len(r.all), outcomes(r.all))
	var acked []attempt
	for _, a := range r.one {
		if a.ok() {
			acked = append(acked, a)
		}
	}
	last := "none acknowledged"
	if len(acked) > 0 {
		last = fmt.Sprintf("%d acknowledged, the last sent at %s", len(acked), r.since(acked[len(acked)-1].sent))
	}
	t.Logf("acks=1 to the cut node: %d tries, %s (broker.session.timeout.ms %v); outcomes %s",
		len(r.one), last, sessionTimeout, outcomes(r.one))
	t.Logf("acks=all records acknowledged: %d before the cut, %d by the majority's producer (which saw %d failures: %s), %d after the heal",
		len(r.base), len(r.maj), r.majFails, r.majFirst, len(r.after))
}

// outcomes counts attempts by outcome, the acknowledged ones as one.
func outcomes(as []attempt) string {
	n := map[string]int{}
	for _, a := range as {
		if a.ok() {
			n["acknowledged"]++
		} else {
			n[a.outcome()]++
		}
	}
	var keys []string
	for k := range n {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d× %s", n[k], k))
	}
	return strings.Join(parts, "; ")
}

// finalByValue indexes the final logs by record value.
func (r *cutRun) finalByValue() map[string]entry {
	final := map[string]entry{}
	for p := range int32(cutParts) {
		for _, e := range r.final[p] {
			final[e.value] = e
		}
	}
	return final
}

// firstNewAcks returns, for each partition, the first acknowledgement the
// majority's producer received for a record of a later leader epoch than
// the cut node's: a new leader had acknowledged a write by then.
func (r *cutRun) firstNewAcks() map[int32]acked {
	final := r.finalByValue()
	first := map[int32]acked{}
	for _, a := range r.maj {
		e, ok := final[a.value]
		if !ok || e.epoch <= r.before[a.part].epoch {
			continue
		}
		if f, seen := first[a.part]; !seen || a.at.Before(f.at) {
			first[a.part] = a
		}
	}
	return first
}

// checkAcksAll: no acks=all write sent to the cut node after the cut was
// acknowledged.
func (r *cutRun) checkAcksAll(t *testing.T) {
	t.Helper()
	for _, a := range r.all {
		if a.ok() {
			t.Errorf("acks=all: node %d, cut off, acknowledged %s at offset %d of partition %d (sent at %s)",
				r.victim.id, a.value, a.offset, a.part, r.since(a.sent))
		}
	}
}

// leaseViolations returns the acks=1 acknowledgements of the cut node
// that its lease forbids (docs/DESIGN.md "Leader lease"): one sent after
// the session timeout from the cut (the lease runs from the sending of
// the last heartbeat answered, which was before the cut), after the
// majority showed it fenced, or after a new leader of the partition had
// acknowledged a write (two leaders acknowledging at once). One sent after
// the session timeout plus leaseSlack fails the test at once.
func (r *cutRun) leaseViolations(t *testing.T) []string {
	t.Helper()
	final := r.finalByValue()
	firstNew := r.firstNewAcks()
	kinds := []string{
		fmt.Sprintf("sent later than broker.session.timeout.ms (%v) after the cut", sessionTimeout),
		"sent after the majority showed it fenced (at " + r.since(r.fencedAt) + ")",
		"sent after the partition's new leader had acknowledged a write",
	}
	found := make([][]string, len(kinds))
	for _, a := range r.one {
		if !a.ok() {
			continue
		}
		if a.sent.After(r.cutAt.Add(sessionTimeout + leaseSlack)) {
			t.Errorf("acks=1: node %d, cut off, acknowledged %s (partition %d) sent at %s, after broker.session.timeout.ms %v + %v",
				r.victim.id, a.value, a.part, r.since(a.sent), sessionTimeout, leaseSlack)
		}
		what := fmt.Sprintf("%s (partition %d) sent at %s", a.value, a.part, r.since(a.sent))
		if a.sent.After(r.cutAt.Add(sessionTimeout)) {
			found[0] = append(found[0], what)
		}
		if !r.fencedAt.IsZero() && a.sent.After(r.fencedAt) {
			found[1] = append(found[1], what)
		}
		if f, ok := firstNew[a.part]; ok && a.sent.After(f.at) {
			found[2] = append(found[2], fmt.Sprintf("%s, after %s (epoch %d) was acknowledged at %s",
				what, f.value, final[f.value].epoch, r.since(f.at)))
		}
	}
	var out []string
	for i, f := range found {
		switch len(f) {
		case 0:
		case 1:
			out = append(out, fmt.Sprintf("acks=1: node %d, cut off, acknowledged 1 record %s: %s", r.victim.id, kinds[i], f[0]))
		default:
			out = append(out, fmt.Sprintf("acks=1: node %d, cut off, acknowledged %d records %s: the first %s, the last %s",
				r.victim.id, len(f), kinds[i], f[0], f[len(f)-1]))
		}
	}
	return out
}

// checkCommitted: every acks=all record acknowledged anywhere is in the
// final log once, at the partition and offset it was acknowledged at, and
// no record is there twice.
func (r *cutRun) checkCommitted(t *testing.T) {
	t.Helper()
	type place struct {
		part   int32
		offset int64
	}
	where := map[string][]place{}
	for p := range int32(cutParts) {
		for _, e := range r.final[p] {
			where[e.value] = append(where[e.value], place{p, e.offset})
		}
	}
	var acks []acked
	for _, set := range [][]acked{r.base, r.maj, r.after} {
		acks = append(acks, set...)
	}
	bad := 0
	for _, a := range acks {
		if at := where[a.value]; len(at) != 1 || at[0] != (place{a.part, a.offset}) {
			if bad++; bad <= 10 {
				t.Errorf("acks=all record %s acknowledged at partition %d offset %d is at %v in the final log",
					a.value, a.part, a.offset, at)
			}
		}
	}
	if bad > 10 {
		t.Errorf("... %d acknowledged acks=all records in all are missing or misplaced", bad)
	}
	for v, at := range where {
		if len(at) > 1 {
			t.Errorf("record %s is in the log %d times: %v", v, len(at), at)
		}
	}
	t.Logf("all %d acknowledged acks=all records checked in the final log", len(acks))
}

// checkTruncated: nothing the cut node took while cut off survives (no
// follower could copy it, so it survives only if the node did not
// truncate its divergent log); the acks=1 records it acknowledged are
// lost, and listed.
func (r *cutRun) checkTruncated(t *testing.T) {
	t.Helper()
	final := r.finalByValue()
	for _, a := range append(append([]attempt(nil), r.all...), r.one...) {
		if e, ok := final[a.value]; ok {
			t.Errorf("record %s, sent to node %d while it was cut off (%s), survived the heal at offset %d of partition %d: the cut node's divergent log was not truncated",
				a.value, r.victim.id, a.outcome(), e.offset, a.part)
		}
	}
	for _, p := range r.vparts {
		var lost []attempt
		for _, a := range r.one {
			if a.ok() && a.part == p {
				lost = append(lost, a)
			}
		}
		var dropped []entry
		for _, e := range r.divergent[p] {
			if f, ok := final[e.value]; !ok || f.offset != e.offset {
				dropped = append(dropped, e)
			}
		}
		msg := fmt.Sprintf("partition %d: node %d truncated %d records it had appended while cut off", p, r.victim.id, len(dropped))
		if len(dropped) > 0 {
			msg += fmt.Sprintf(" (offsets %d to %d, epoch %d)", dropped[0].offset, dropped[len(dropped)-1].offset, dropped[0].epoch)
		}
		if len(lost) > 0 {
			msg += fmt.Sprintf("; %d acks=1 records it acknowledged are lost (allowed): %s", len(lost), lostList(lost))
		}
		t.Log(msg)
	}
}

// lostList lists lost acknowledged records as value@offset.
func lostList(as []attempt) string {
	var parts []string
	for _, a := range as {
		parts = append(parts, fmt.Sprintf("%s@%d", a.value, a.offset))
	}
	return strings.Join(parts, " ")
}
