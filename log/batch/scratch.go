package batch

import "runtime"

// MaxDecompressed bounds the decompressed records section of one batch
// wherever weir looks inside a compressed batch it stores or has stored:
// the leader's check of a produced batch, ListOffsets by time, the cleaner
// and dump-log. Kafka has no such bound (it decompresses as a stream); weir
// refuses a batch past it (a decompression bomb gets a clear error instead
// of the broker's memory). With the default max.message.bytes of 1 MiB it
// allows a compression ratio of 64.
const MaxDecompressed = 64 << 20

// retainScratch is the largest buffer a decompression slot keeps between
// uses; a larger one (a rare batch that decompresses big) is dropped after
// its use, so idle slots pin little memory.
const retainScratch = 4 << 20

// scratch is a reusable decompression buffer.
type scratch struct{ buf []byte }

// slots holds the decompression buffers; taking one is the right to
// decompress into it. Their number bounds both the memory held by
// decompressed sections (slots x limit at worst) and the decompressions
// running at once: they are CPU bound, so more than the cores would only
// hold more memory without going faster.
var slots = newSlots(max(2, runtime.GOMAXPROCS(0)))

func newSlots(n int) chan *scratch {
	c := make(chan *scratch, n)
	for range n {
		c <- new(scratch)
	}
	return c
}

// decompressScratch decompresses the records section of a batch into a
// slot's buffer and returns it with the release that gives the slot back;
// the section is valid until then. It waits for a free slot.
func decompressScratch(codec int16, src []byte, limit int) ([]byte, func(), error) {
	s := <-slots
	release := func() {
		if cap(s.buf) > retainScratch {
			s.buf = nil
		}
		slots <- s
	}
	out, err := decompressInto(s.buf, codec, src, limit)
	if err != nil {
		release()
		return nil, nil, err
	}
	if cap(out) > cap(s.buf) {
		s.buf = out[:0]
	}
	return out, release, nil
}
