package wire

import "sync"

// DefaultFetchMemoryBytes is the node-wide bound on the record bytes that
// Fetch reads hold at once when BrokerHandlerConfig.FetchMemoryBytes is
// 0. Kafka has no such bound: it sends segment bytes with zero-copy
// transfers, while weir reads them into memory and encodes them, so
// concurrent fetches of fetch.max.bytes each would otherwise hold their
// sum.
const DefaultFetchMemoryBytes = 128 << 20

// fetchMemory is that bound: a byte budget shared by every fetch of the
// node. A fetch takes what it may read before each partition's read, gets
// back at once what the read did not use, and returns the rest once its
// response is written (or its connection closed): the bytes stand for the
// records read and then for their encoding, so the node holds at most
// about twice the budget for fetches, however many connections leave
// their responses unread. Under contention a
// fetch reads less: what is free, and at least the whole first batch of
// its first partition with data (KIP-74), so every consumer still makes
// progress; that batch may take the budget past its size, by at most one
// batch per fetch.
type fetchMemory struct {
	mu   sync.Mutex
	free int64
	size int64
}

func newFetchMemory(size int64) *fetchMemory {
	return &fetchMemory{free: size, size: size}
}

// take grants up to want bytes: want, or what is free when less.
func (m *fetchMemory) take(want int64) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	grant := max(min(want, m.free), 0)
	m.free -= grant
	return grant
}

// force takes n bytes even past the budget.
func (m *fetchMemory) force(n int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.free -= n
}

// give returns n bytes.
func (m *fetchMemory) give(n int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.free = min(m.free+n, m.size)
}

// inUse reports the bytes taken.
func (m *fetchMemory) inUse() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.size - m.free
}
