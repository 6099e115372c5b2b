package metadata

import (
	"hash/maphash"
	"iter"
	"maps"
)

// pmap is a persistent map: a fixed array of shards, each a Go map. Images
// share a pmap's array and shards until a Builder writes to them; the first
// write in a build copies the array of shard pointers and the one shard
// written to, so an update costs O(shardCount + n/shardCount), not O(n).
// A pmap value is immutable once its Builder has built an Image.
type pmap[K comparable, V any] struct {
	shards *[shardCount]map[K]V // nil while empty
	n      int
}

const shardCount = 64

// shardSeed spreads keys over shards. It differs between processes; shard
// placement never shows in an image's contents or in its iteration order
// as the accessors expose it (they sort).
var shardSeed = maphash.MakeSeed()

func shardOf[K comparable](k K) int {
	return int(maphash.Comparable(shardSeed, k) % shardCount)
}

func (m pmap[K, V]) get(k K) (V, bool) {
	if m.shards == nil {
		var zero V
		return zero, false
	}
	v, ok := m.shards[shardOf(k)][k]
	return v, ok
}

func (m pmap[K, V]) len() int { return m.n }

// all yields every entry in no particular order.
func (m pmap[K, V]) all() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		if m.shards == nil {
			return
		}
		for _, shard := range m.shards {
			for k, v := range shard {
				if !yield(k, v) {
					return
				}
			}
		}
	}
}

// pmapOwner records which parts of one pmap the current build has copied
// and may therefore write in place.
type pmapOwner struct {
	array  bool
	shards uint64 // bit i: shard i
}

// writable returns shard s of m, copying the shard array and the shard
// first unless this build already did.
func (m *pmap[K, V]) writable(o *pmapOwner, s int) map[K]V {
	if !o.array {
		var arr [shardCount]map[K]V
		if m.shards != nil {
			arr = *m.shards
		}
		m.shards = &arr
		o.array = true
	}
	if o.shards&(1<<s) == 0 {
		m.shards[s] = maps.Clone(m.shards[s])
		if m.shards[s] == nil {
			m.shards[s] = make(map[K]V)
		}
		o.shards |= 1 << s
	}
	return m.shards[s]
}

func (m *pmap[K, V]) set(o *pmapOwner, k K, v V) {
	shard := m.writable(o, shardOf(k))
	if _, ok := shard[k]; !ok {
		m.n++
	}
	shard[k] = v
}

func (m *pmap[K, V]) delete(o *pmapOwner, k K) {
	if _, ok := m.get(k); !ok {
		return
	}
	delete(m.writable(o, shardOf(k)), k)
	m.n--
}

// equalPmap reports whether a and b hold the same keys with values equal by
// eq.
func equalPmap[K comparable, V any](a, b pmap[K, V], eq func(V, V) bool) bool {
	if a.n != b.n {
		return false
	}
	for k, va := range a.all() {
		vb, ok := b.get(k)
		if !ok || !eq(va, vb) {
			return false
		}
	}
	return true
}
