package batch

import (
	"bytes"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestFranzGoInterop checks each codec against franz-go's client: what its
// producer compresses, Decompress reads; what Compress writes, its consumer
// reads. Its consumer also reads the hand-built xerial framing.
func TestFranzGoInterop(t *testing.T) {
	theirs := map[int16]kgo.CompressionCodec{
		CodecGzip:   kgo.GzipCompression(),
		CodecSnappy: kgo.SnappyCompression(),
		CodecLz4:    kgo.Lz4Compression(),
		CodecZstd:   kgo.ZstdCompression(),
	}
	dec := kgo.DefaultDecompressor()
	for name, src := range payloads() {
		if len(src) == 0 {
			continue // franz-go never compresses an empty section
		}
		for _, c := range codecs[1:] {
			comp, err := kgo.DefaultCompressor(theirs[c.codec])
			if err != nil {
				t.Fatal(err)
			}
			z, used := comp.Compress(new(bytes.Buffer), src)
			if int16(used) != c.codec {
				t.Fatalf("%s: franz-go compressed with codec %d", c.name, used)
			}
			got, err := Decompress(c.codec, bytes.Clone(z), len(src))
			if err != nil || !bytes.Equal(got, src) {
				t.Fatalf("%s/%s: franz-go's output: %d bytes, %v", c.name, name, len(got), err)
			}
			ours, err := Compress(c.codec, src)
			if err != nil {
				t.Fatal(err)
			}
			got, err = dec.Decompress(ours, kgo.CompressionCodecType(c.codec))
			if err != nil || !bytes.Equal(got, src) {
				t.Fatalf("%s/%s: franz-go reading ours: %d bytes, %v", c.name, name, len(got), err)
			}
		}
		got, err := dec.Decompress(xerialFrame(src, 32<<10), kgo.CodecSnappy)
		if err != nil || !bytes.Equal(got, src) {
			t.Fatalf("xerial/%s: franz-go reading the framing: %d bytes, %v", name, len(got), err)
		}
	}
}
