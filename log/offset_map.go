package log

import (
	"errors"
	"sort"

	"github.com/cespare/xxhash/v2"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/weirmq/weir/log/batch"
)

// Sentinels that end a scan of the dirty range early.
var (
	errMapFull = errors.New("offset map full")
	errStop    = errors.New("stop scan")
)

// offsetMap is the cleaner's key-to-offset map: a fixed-size open-addressing
// table from a 128-bit digest of a record key to the latest offset seen for
// it. Its memory is fixed when it is created (log.cleaner.dedupe.buffer.size)
// and never grows: when it holds as many keys as the load factor allows, it
// is full and the cleaner stops mapping there, as Kafka's SkimpyOffsetMap
// does. Two different keys share an entry only if both 64-bit xxhash digests
// (with different seeds) collide.
//
// Slots are probed by double hashing over a prime number of slots, so every
// probe sequence visits every slot. Not safe for concurrent use.
type offsetMap struct {
	slots  []uint64 // slotWords words per slot: digest hi, digest lo, offset+1 (0: empty)
	n      uint64   // number of slots, a prime
	max    int      // entries allowed before the map is full
	used   int      // entries held
	seeded *xxhash.Digest
}

const (
	slotWords   = 3
	slotBytes   = slotWords * 8
	digestSeed2 = 0x9e3779b97f4a7c15 // seed of the second digest
)

// newOffsetMap sizes a map to memBytes of slots, of which loadFactor may be
// used. It always has at least 3 slots and 1 usable entry, and keeps at
// least one slot free so that a lookup of a missing key ends.
func newOffsetMap(memBytes int, loadFactor float64) *offsetMap {
	n := prevPrime(uint64(max(memBytes/slotBytes, 3)))
	limit := int(float64(n) * loadFactor)
	limit = min(max(limit, 1), int(n)-1)
	return &offsetMap{
		slots:  make([]uint64, n*slotWords),
		n:      n,
		max:    limit,
		seeded: xxhash.NewWithSeed(digestSeed2),
	}
}

// capacity is the number of keys the map holds before it is full.
func (m *offsetMap) capacity() int { return m.max }

// size is the number of keys held.
func (m *offsetMap) size() int { return m.used }

// full reports whether another new key would pass the load factor.
func (m *offsetMap) full() bool { return m.used >= m.max }

// fill is the used fraction of the capacity.
func (m *offsetMap) fill() float64 { return float64(m.used) / float64(m.max) }

// reset empties the map, keeping its memory.
func (m *offsetMap) reset() {
	if m.used > 0 {
		clear(m.slots)
	}
	m.used = 0
}

// digest returns the two 64-bit digests of key.
func (m *offsetMap) digest(key []byte) (uint64, uint64) {
	m.seeded.ResetWithSeed(digestSeed2)
	_, _ = m.seeded.Write(key)
	return xxhash.Sum64(key), m.seeded.Sum64()
}

// find returns the slot holding (hi, lo), or the empty slot where it would
// go.
func (m *offsetMap) find(hi, lo uint64) uint64 {
	i := hi % m.n
	step := 1 + lo%(m.n-1)
	for {
		s := m.slots[i*slotWords : i*slotWords+slotWords : i*slotWords+slotWords]
		if s[2] == 0 || s[0] == hi && s[1] == lo {
			return i
		}
		i += step
		if i >= m.n {
			i -= m.n
		}
	}
}

// put records offset as the latest offset of key, replacing an earlier one.
// It returns false, changing nothing, for a new key when the map is full.
func (m *offsetMap) put(key []byte, offset int64) bool {
	hi, lo := m.digest(key)
	i := m.find(hi, lo)
	s := m.slots[i*slotWords : i*slotWords+slotWords : i*slotWords+slotWords]
	if s[2] == 0 {
		if m.full() {
			return false
		}
		m.used++
		s[0], s[1] = hi, lo
	}
	s[2] = uint64(offset) + 1
	return true
}

// get returns the latest offset recorded for key, or -1.
func (m *offsetMap) get(key []byte) int64 {
	hi, lo := m.digest(key)
	s := m.slots[m.find(hi, lo)*slotWords:]
	if s[2] == 0 {
		return -1
	}
	return int64(s[2] - 1)
}

// prevPrime returns the largest prime <= n (n >= 3).
func prevPrime(n uint64) uint64 {
	for ; n > 3; n-- {
		if isPrime(n) {
			return n
		}
	}
	return 3
}

func isPrime(n uint64) bool {
	if n%2 == 0 {
		return n == 2
	}
	for d := uint64(3); d*d <= n; d += 2 {
		if n%d == 0 {
			return false
		}
	}
	return true
}

// buildMap maps the keys of the dirty range to their latest offsets, until
// the range ends or the map is full, and sets mapEnd.
func (p *cleanPass) buildMap() error {
	p.c.offsets.reset()
	p.mapEnd = p.firstDirty
	if p.firstDirty >= p.end {
		return nil
	}
	full := false
	for i := max(segIndex(p.snap, p.firstDirty), 0); i < len(p.snap) && p.snap[i].base < p.end && !full; i++ {
		seg := p.snap[i]
		err := p.scanSegment(seg, p.sizes[i], true, func(pos int64, b []byte) error {
			if batch.BaseOffset(b) >= p.end {
				return errStop
			}
			return p.mapBatch(seg, pos, b)
		})
		switch {
		case errors.Is(err, errMapFull):
			full = true
		case err != nil && !errors.Is(err, errStop):
			return err
		}
	}
	if !full {
		p.mapEnd = p.end
	}
	p.stats.MapKeys, p.stats.MapFill = p.c.offsets.size(), p.c.offsets.fill()
	return nil
}

// mapBatch puts the keyed records of one batch at or past firstDirty in the
// map (transaction markers have no keys to map) and moves mapEnd past it.
// When the map fills, mapEnd stops at the first record left out and it
// returns errMapFull.
func (p *cleanPass) mapBatch(seg *segment, pos int64, b []byte) error {
	base, last := batch.BaseOffset(b), batch.LastOffset(b)
	if last < p.firstDirty {
		return nil
	}
	if batch.Attributes(b)&batch.ControlBit == 0 {
		// ScanRecords checks the whole batch before fn sees a record: a
		// batch whose records cannot be read is kept unchanged by the
		// filter, and none of its keys may shadow earlier records.
		err := batch.ScanRecords(b, maxDecodeBytes, func(r *kmsg.Record) error {
			off := base + int64(r.OffsetDelta)
			if off < p.firstDirty || r.Key == nil {
				return nil
			}
			if !p.c.offsets.put(r.Key, off) {
				p.mapEnd = off
				return errMapFull
			}
			return nil
		})
		if errors.Is(err, errMapFull) {
			return err
		}
		if err != nil {
			p.l.reportBadBatch("cleaning (batch kept unchanged)", seg.logPath, pos, base, err)
		}
	}
	p.mapEnd = last + 1
	return nil
}

// segIndex is the index of the segment of segs holding offset, or -1.
func segIndex(segs []*segment, offset int64) int {
	return sort.Search(len(segs), func(i int) bool { return segs[i].base > offset }) - 1
}
