package batch

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
)

// payloads are inputs of several shapes: empty, tiny, compressible text, and
// random bytes that do not compress, past the 64 KiB block sizes.
func payloads() map[string][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 200<<10)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	return map[string][]byte{
		"empty":  {},
		"byte":   {42},
		"text":   bytes.Repeat([]byte("the quick brown fox jumps over the lazy dog "), 10000),
		"random": random,
	}
}

func TestCompressRoundTrip(t *testing.T) {
	for name, src := range payloads() {
		for _, c := range codecs {
			t.Run(c.name+"/"+name, func(t *testing.T) {
				z, err := Compress(c.codec, src)
				if err != nil {
					t.Fatalf("Compress: %v", err)
				}
				got, err := Decompress(c.codec, z, len(src))
				if err != nil {
					t.Fatalf("Decompress at limit %d: %v", len(src), err)
				}
				if !bytes.Equal(got, src) {
					t.Fatalf("round trip differs: %d bytes, want %d", len(got), len(src))
				}
				if len(src) == 0 {
					return
				}
				_, err = Decompress(c.codec, z, len(src)-1)
				wantErr(t, err, ErrCorrupt)
			})
		}
	}
}

// xerialFrame frames src as the Java client's xerial snappy stream does, in
// chunks of at most chunk bytes.
func xerialFrame(src []byte, chunk int) []byte {
	out := append([]byte("\x82SNAPPY\x00"), 0, 0, 0, 1, 0, 0, 0, 1)
	for len(src) > 0 {
		n := min(chunk, len(src))
		block := snappy.Encode(nil, src[:n])
		out = binary.BigEndian.AppendUint32(out, uint32(len(block)))
		out = append(out, block...)
		src = src[n:]
	}
	return out
}

func TestDecompressXerial(t *testing.T) {
	src := payloads()["text"]
	framed := xerialFrame(src, 32<<10)
	got, err := Decompress(CodecSnappy, framed, len(src))
	if err != nil {
		t.Fatalf("Decompress: %v", err)
	}
	if !bytes.Equal(got, src) {
		t.Fatalf("xerial decode differs: %d bytes, want %d", len(got), len(src))
	}
	_, err = Decompress(CodecSnappy, framed, len(src)-1)
	wantErr(t, err, ErrCorrupt)

	// A header and no chunks is an empty section.
	if got, err := Decompress(CodecSnappy, framed[:xerialHeaderSize], 10); err != nil || len(got) != 0 {
		t.Fatalf("header only: %d bytes, %v", len(got), err)
	}
	bad := map[string][]byte{
		"chunk length past the end": binary.BigEndian.AppendUint32(bytes.Clone(framed[:xerialHeaderSize]), 1000),
		"negative chunk length":     binary.BigEndian.AppendUint32(bytes.Clone(framed[:xerialHeaderSize]), 1<<31),
		"partial length":            append(bytes.Clone(framed[:xerialHeaderSize]), 0, 0),
		"cut inside a chunk":        framed[:len(framed)-1],
		"garbage chunk":             append(binary.BigEndian.AppendUint32(bytes.Clone(framed[:xerialHeaderSize]), 3), 0xff, 0xff, 0xff),
	}
	for name, in := range bad {
		_, err := Decompress(CodecSnappy, in, 1<<20)
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		wantErr(t, err, ErrCorrupt)
	}
}

func TestUnknownCodec(t *testing.T) {
	for _, codec := range []int16{-1, 5, 7, 100} {
		_, err := Compress(codec, []byte("x"))
		wantErr(t, err, ErrCorrupt)
		_, err = Decompress(codec, []byte("x"), 10)
		wantErr(t, err, ErrCorrupt)
	}
}

func TestDecompressGarbage(t *testing.T) {
	garbage := [][]byte{{}, {0xff}, bytes.Repeat([]byte{0xfe, 0x01}, 100)}
	for _, c := range codecs[1:] {
		for _, in := range garbage {
			if c.codec == CodecSnappy && len(in) == 0 {
				continue
			}
			_, err := Decompress(c.codec, in, 1<<20)
			if err == nil {
				t.Errorf("%s: %x decoded", c.name, in)
				continue
			}
			wantErr(t, err, ErrCorrupt)
		}
	}
}

// TestDecompressBomb decompresses 64 MiB of zeros under a 64 KiB limit and
// checks that it fails without allocating anywhere near the output size.
func TestDecompressBomb(t *testing.T) {
	if testing.Short() {
		t.Skip("compresses 64 MiB per codec")
	}
	zeros := make([]byte, 64<<20)
	const limit = 64 << 10
	for _, c := range codecs[1:] {
		t.Run(c.name, func(t *testing.T) {
			z, err := Compress(c.codec, zeros)
			if err != nil {
				t.Fatalf("Compress: %v", err)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err = Decompress(c.codec, z, limit)
			runtime.ReadMemStats(&after)
			wantErr(t, err, ErrCorrupt)
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
				t.Fatalf("allocated %d bytes to reject a bomb under a %d byte limit", alloc, limit)
			}
		})
	}
}

// TestCompressPooled checks that the hot path reuses encoders: compressing
// a small section allocates a few buffers, not an encoder's tables.
func TestCompressPooled(t *testing.T) {
	if raceEnabled {
		t.Skip("under the race detector sync.Pool drops items at random")
	}
	src := payloads()["text"][:4<<10]
	for _, c := range codecs[1:] {
		z, _ := Compress(c.codec, src)
		var m1, m2 runtime.MemStats
		runtime.ReadMemStats(&m1)
		const runs = 50
		for range runs {
			if _, err := Compress(c.codec, src); err != nil {
				t.Fatal(err)
			}
			if _, err := Decompress(c.codec, z, len(src)); err != nil {
				t.Fatal(err)
			}
		}
		runtime.ReadMemStats(&m2)
		if per := (m2.TotalAlloc - m1.TotalAlloc) / runs; per > 64<<10 {
			t.Errorf("%s: %d bytes allocated per compress and decompress of %d bytes", c.name, per, len(src))
		}
	}
}

func TestCompressConcurrent(t *testing.T) {
	src := payloads()["text"]
	var wg sync.WaitGroup
	for g := range 8 {
		c := codecs[1+g%4]
		wg.Go(func() {
			for range 20 {
				z, err := Compress(c.codec, src)
				if err != nil {
					t.Error(err)
					return
				}
				got, err := Decompress(c.codec, z, len(src))
				if err != nil || !bytes.Equal(got, src) {
					t.Errorf("%s: round trip failed: %v", c.name, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// zstdStream compresses src with a streaming zstd encoder, which, like the
// Java client's, writes no content size in the frame header.
func zstdStream(t *testing.T, src []byte, opts ...zstd.EOption) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := zstd.NewWriter(&buf, append(opts, zstd.WithEncoderConcurrency(1))...)
	if err != nil {
		t.Fatal(err)
	}
	// Flushing before the end commits the header before the size is known.
	half := len(src) / 2
	if _, err := zw.Write(src[:half]); err != nil {
		t.Fatal(err)
	}
	if err := zw.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := zw.Write(src[half:]); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	var h zstd.Header
	if err := h.Decode(buf.Bytes()); err != nil || h.HasFCS {
		t.Fatalf("stream frame header: content size %v, %v", h.HasFCS, err)
	}
	return buf.Bytes()
}

// TestDecompressZstdStream covers frames without a content size, which
// Decompress decodes by growing its buffer, and sections of several frames.
func TestDecompressZstdStream(t *testing.T) {
	src := payloads()["text"]
	z := zstdStream(t, src)
	got, err := Decompress(CodecZstd, z, len(src))
	if err != nil || !bytes.Equal(got, src) {
		t.Fatalf("stream frame: %d bytes, %v", len(got), err)
	}
	_, err = Decompress(CodecZstd, z, len(src)-1)
	wantErr(t, err, ErrCorrupt)

	// The Java client declares a window of 2 MiB or more even for a small
	// batch; the window must not count against a smaller limit.
	big := zstdStream(t, src[:3000], zstd.WithWindowSize(8<<20))
	var h zstd.Header
	if err := h.Decode(big); err != nil || h.WindowSize < 8<<20 {
		t.Fatalf("window %d, %v", h.WindowSize, err)
	}
	got, err = Decompress(CodecZstd, big, 3000)
	if err != nil || !bytes.Equal(got, src[:3000]) {
		t.Fatalf("8 MiB window, 3000 byte limit: %d bytes, %v", len(got), err)
	}

	one, _ := Compress(CodecZstd, src[:1000])
	two := append(bytes.Clone(one), zstdStream(t, src[1000:5000])...)
	got, err = Decompress(CodecZstd, two, 5000)
	if err != nil || !bytes.Equal(got, src[:5000]) {
		t.Fatalf("two frames: %d bytes, %v", len(got), err)
	}
	_, err = Decompress(CodecZstd, two, 4999)
	wantErr(t, err, ErrCorrupt)

	zeros := make([]byte, 64<<20)
	bomb := zstdStream(t, zeros)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = Decompress(CodecZstd, bomb, 1<<20)
	runtime.ReadMemStats(&after)
	wantErr(t, err, ErrCorrupt)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
		t.Fatalf("allocated %d bytes to reject a bomb under a 1 MiB limit", alloc)
	}
}

// TestDecompressGzipMembers decodes a section of two gzip members, as
// GZIPInputStream does.
func TestDecompressGzipMembers(t *testing.T) {
	a, _ := Compress(CodecGzip, []byte("hello "))
	b, _ := Compress(CodecGzip, []byte("world"))
	got, err := Decompress(CodecGzip, append(bytes.Clone(a), b...), 100)
	if err != nil || string(got) != "hello world" {
		t.Fatalf("got %q, %v", got, err)
	}
}
