package wire

import (
	"math/bits"
	"sync"
	"sync/atomic"
)

// Frame buffers of requests between framePoolMin and framePoolMax bytes
// come from size-class pools (powers of two) and go back when the handler
// says it is done with them (Request.ReleaseFrame): a producer sending
// 1 MiB requests then reuses the same few buffers instead of allocating
// and collecting one per request. Smaller frames are cheap to allocate;
// larger ones are rare and not kept.
const (
	framePoolMin = 16 << 10
	framePoolMax = 8 << 20
)

// framePools[c] holds buffers of capacity 1<<c; 24 classes reach 8 MiB.
var framePools [24]sync.Pool

// frameClass returns the pool index for a frame of size bytes, or -1.
func frameClass(size int) int {
	if size < framePoolMin || size > framePoolMax {
		return -1
	}
	return bits.Len(uint(size - 1))
}

// getFrame returns a buffer of length size, from a pool when its class has
// one.
func getFrame(size int) []byte {
	c := frameClass(size)
	if c < 0 {
		return make([]byte, size)
	}
	if b, ok := framePools[c].Get().(*[]byte); ok {
		return (*b)[:size]
	}
	return make([]byte, size, 1<<c)
}

// putFrame gives a buffer from getFrame back to its pool.
func putFrame(b []byte) {
	c := frameClass(cap(b))
	if c < 0 || cap(b) != 1<<c {
		return
	}
	b = b[:0]
	framePools[c].Put(&b)
}

// frameCost is what a frame of size bytes holds of the request memory
// pool: the capacity getFrame gives it.
func frameCost(size int32) int64 {
	if c := frameClass(int(size)); c >= 0 {
		return 1 << c
	}
	return int64(size)
}

// frameRef is a request's claim on its frame buffer and on the request
// memory pool's bytes for it.
type frameRef struct {
	buf      []byte
	pool     *memPool
	grant    memGrant
	released atomic.Bool
	returned atomic.Bool
}

// release returns the buffer to its pool and the bytes to the memory
// pool, once.
func (f *frameRef) release() {
	if f != nil && f.released.CompareAndSwap(false, true) {
		putFrame(f.buf)
		f.buf = nil
		f.done()
	}
}

// done returns the frame's bytes to the memory pool, once, leaving the
// buffer to the garbage collector: the request is over (its response
// written or dropped) but the handler may not have released the frame.
func (f *frameRef) done() {
	if f != nil && f.returned.CompareAndSwap(false, true) {
		f.pool.release(f.grant)
	}
}
