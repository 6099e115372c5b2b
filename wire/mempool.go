package wire

import (
	"context"
	"sync"
)

// memPool is queued.max.request.bytes: it bounds the bytes of request
// frames held in memory, from the moment a frame's size is read until its
// request is done (its frame released, or its response written or
// dropped). A connection whose next frame does not fit waits before
// reading the frame, so TCP pushes back on its client.
//
// As Kafka's SimpleMemoryPool in its non-strict mode, a large frame is
// granted whenever the pool is not exhausted, even if it does not fit
// whole: one frame up to socket.request.max.bytes is always servable, and
// at most size + socket.request.max.bytes is ever held. Unlike Kafka, a
// part of the pool (reserve) is kept for small frames, the requests of
// ordinary clients: large frames never take it, so a crowd of slow huge
// frames cannot stop a consumer's fetches or a producer's small batches.
// Waiting large frames are granted in arrival order; a small frame that
// fits the reserve never waits behind them.
//
// A zero size is unbounded (Kafka's -1): acquire grants at once and
// nothing is counted.
type memPool struct {
	size, reserve, smallMax int64

	mu sync.Mutex
	// mainFree may go negative (the non-strict overshoot); reserveFree
	// never does.
	mainFree, reserveFree int64
	waiters               []*memWaiter
	largeWaiting          int // large frames among waiters
	waits                 uint64
}

// memGrant is one frame's claim on the pool: what it took from each part.
type memGrant struct {
	main, reserve int64
}

// memWaiter is a frame waiting for room.
type memWaiter struct {
	n     int64
	small bool
	ready chan memGrant // buffered; receives the grant once
}

// newMemPool returns a pool of size bytes (0: unbounded). An eighth of it
// is reserved for frames of at most a quarter of the reserve (32 MiB and
// 8 MiB for the default 256 MiB).
func newMemPool(size int64) *memPool {
	p := &memPool{size: max(size, 0)}
	p.reserve = p.size / 8
	p.smallMax = p.reserve / 4
	p.mainFree, p.reserveFree = p.size-p.reserve, p.reserve
	return p
}

// acquire waits until n bytes may be held and returns the grant, or
// returns ctx's error (granting nothing).
func (p *memPool) acquire(ctx context.Context, n int64) (memGrant, error) {
	if p == nil || p.size == 0 {
		return memGrant{}, nil
	}
	w := &memWaiter{n: n, small: n <= p.smallMax}
	p.mu.Lock()
	if g, ok := p.tryLocked(w, p.largeWaiting > 0); ok {
		p.mu.Unlock()
		return g, nil
	}
	w.ready = make(chan memGrant, 1)
	p.waiters = append(p.waiters, w)
	if !w.small {
		p.largeWaiting++
	}
	p.waits++
	p.mu.Unlock()
	select {
	case g := <-w.ready:
		return g, nil
	case <-ctx.Done():
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, o := range p.waiters {
		if o == w {
			p.waiters = append(p.waiters[:i], p.waiters[i+1:]...)
			if !w.small {
				p.largeWaiting--
			}
			return memGrant{}, ctx.Err()
		}
	}
	// Granted meanwhile: give it back.
	p.releaseLocked(<-w.ready)
	return memGrant{}, ctx.Err()
}

// tryLocked grants w if it may go now. queued says earlier large frames
// wait: a large frame then queues behind them, and a small one may use
// only the reserve.
func (p *memPool) tryLocked(w *memWaiter, queued bool) (memGrant, bool) {
	switch {
	case w.small && !queued && p.mainFree >= w.n:
		p.mainFree -= w.n
		return memGrant{main: w.n}, true
	case w.small && p.reserveFree >= w.n:
		p.reserveFree -= w.n
		return memGrant{reserve: w.n}, true
	case !queued && p.mainFree > 0:
		p.mainFree -= w.n
		return memGrant{main: w.n}, true
	}
	return memGrant{}, false
}

// release returns a grant and wakes the waiters that now fit.
func (p *memPool) release(g memGrant) {
	if p == nil || g == (memGrant{}) {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.releaseLocked(g)
}

func (p *memPool) releaseLocked(g memGrant) {
	p.mainFree += g.main
	p.reserveFree += g.reserve
	blocked := false
	kept := p.waiters[:0]
	for _, w := range p.waiters {
		if g, ok := p.tryLocked(w, blocked); ok {
			w.ready <- g
			if !w.small {
				p.largeWaiting--
			}
			continue
		}
		kept = append(kept, w)
		blocked = blocked || !w.small
	}
	clear(p.waiters[len(kept):])
	p.waiters = kept
}

// inUse returns the bytes held now and how many frames ever waited.
func (p *memPool) inUse() (int64, uint64) {
	if p == nil {
		return 0, 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.size - p.mainFree - p.reserveFree, p.waits
}
