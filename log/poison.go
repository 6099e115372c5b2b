package log

import "sync"

// maxPoisonReports bounds the bad batches a manager remembers having
// logged; past it the memory starts over (a batch may then be logged once
// more).
const maxPoisonReports = 1024

// poisonKey names one stored batch (its log and base offset) and what met
// it.
type poisonKey struct {
	tp   TopicPartition
	base int64
	what string
}

// poisonReports remembers the stored batches found bad (records that do
// not decode, a stream that is not its codec's, a bomb) that were logged,
// so that each is logged once by each of a read, ListOffsets and the
// cleaner, however often they meet it again.
type poisonReports struct {
	mu   sync.Mutex
	seen map[poisonKey]struct{}
}

// first records k and reports whether it is new.
func (p *poisonReports) first(k poisonKey) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.seen[k]; ok {
		return false
	}
	if p.seen == nil || len(p.seen) >= maxPoisonReports {
		p.seen = make(map[poisonKey]struct{})
	}
	p.seen[k] = struct{}{}
	return true
}

// reportBadBatch logs, once per batch, that the stored batch of l at base
// offset base cannot be used: what is what was being done (and what is done
// instead), path and pos where it lies.
func (l *Log) reportBadBatch(what, path string, pos, base int64, err error) {
	if !l.m.poison.first(poisonKey{tp: l.tp, base: base, what: what}) {
		return
	}
	l.m.logger.Error("log: bad record batch on disk", "partition", l.tp.String(), "while", what,
		"path", path, "position", pos, "base_offset", base, "err", err)
}
