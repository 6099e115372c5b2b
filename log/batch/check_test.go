package batch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// checkBatch builds an uncompressed (or codec) batch of n records of size
// value bytes, each keyed unless keyless.
func checkBatch(t testing.TB, codec int16, n, size int, keyless bool) []byte {
	t.Helper()
	recs := make([]kmsg.Record, n)
	for i := range recs {
		recs[i] = kmsg.Record{OffsetDelta: int32(i), Value: make([]byte, size),
			Headers: []kmsg.Header{{Key: "h", Value: []byte("v")}}}
		if !keyless {
			recs[i].Key = fmt.Appendf(nil, "k%d", i)
		}
	}
	b, err := Build(Options{ProducerID: NoProducerID, ProducerEpoch: NoProducerEpoch, BaseSequence: NoSequence,
		PartitionLeaderEpoch: NoPartitionLeaderEpoch, Codec: codec}, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCheckRecords(t *testing.T) {
	for _, c := range codecs {
		keyed, keyless := checkBatch(t, c.codec, 50, 20, false), checkBatch(t, c.codec, 50, 20, true)
		for _, needKeys := range []bool{false, true} {
			if err := CheckRecords(keyed, needKeys, 1<<20); err != nil {
				t.Errorf("%s, keys needed %v: %v", c.name, needKeys, err)
			}
		}
		if err := CheckRecords(keyless, false, 1<<20); err != nil {
			t.Errorf("%s without keys: %v", c.name, err)
		}
		if err := CheckRecords(keyless, true, 1<<20); !errors.Is(err, ErrNoKey) {
			t.Errorf("%s without keys, keys needed: %v, want ErrNoKey", c.name, err)
		}
		if c.codec != CodecNone {
			if err := CheckRecords(keyed, false, 100); !errors.Is(err, ErrCorrupt) || !errors.Is(err, ErrOverLimit) {
				t.Errorf("%s over the decompression limit: %v, want ErrOverLimit and ErrCorrupt", c.name, err)
			}
		}
	}
}

// A decompression slot's buffer may be larger than a later call's limit
// (it kept what an earlier batch needed): the limit still holds, for every
// codec, and a section under the limit decodes whatever the buffer held.
func TestDecompressIntoLimit(t *testing.T) {
	text := bytes.Repeat([]byte("a record section "), 1000)
	for _, c := range codecs[1:] {
		z, err := Compress(c.codec, text)
		if err != nil {
			t.Fatal(err)
		}
		big := bytes.Repeat([]byte{0xaa}, 1<<20)
		if _, err := decompressInto(big, c.codec, z, len(text)-1); !errors.Is(err, ErrOverLimit) {
			t.Errorf("%s: %d bytes under a limit of %d into a 1 MiB buffer: %v, want ErrOverLimit", c.name, len(text), len(text)-1, err)
		}
		for _, dst := range [][]byte{nil, big[:0:10], big} {
			out, err := decompressInto(dst, c.codec, z, len(text))
			if err != nil || !bytes.Equal(out, text) {
				t.Errorf("%s into a buffer of %d: %d bytes, %v", c.name, cap(dst), len(out), err)
			}
		}
	}
}

// Checking a compressed batch reuses a pooled buffer: once warm, it does
// not allocate the decompressed section again.
func TestCheckRecordsReusesBuffer(t *testing.T) {
	if raceEnabled {
		t.Skip("under the race detector sync.Pool drops items at random")
	}
	for _, c := range codecs[1:] {
		b := checkBatch(t, c.codec, 2000, 100, false) // about 250 KiB decompressed
		for range cap(slots) {                        // the slots are taken in turn: warm each
			if err := CheckRecords(b, true, MaxDecompressed); err != nil {
				t.Fatal(err)
			}
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		before := ms.TotalAlloc
		for range 20 {
			if err := CheckRecords(b, true, MaxDecompressed); err != nil {
				t.Fatal(err)
			}
		}
		runtime.ReadMemStats(&ms)
		if per := (ms.TotalAlloc - before) / 20; per > 64<<10 {
			t.Errorf("%s: %d bytes allocated per check of a batch of %d bytes", c.name, per, len(b))
		}
	}
}

// Poison batches whose header and CRC hold: a false record count, offset
// deltas that skip, a stream that is not the codec's, and a bomb.
func TestCheckRecordsPoison(t *testing.T) {
	for _, c := range codecs[1:] {
		falseCount := checkBatch(t, c.codec, 1, 10, false)
		binary.BigEndian.PutUint32(falseCount[offNumRecords:], math.MaxInt32)
		binary.BigEndian.PutUint32(falseCount[offLastOffsetDelta:], math.MaxInt32-1)
		SetCRC(falseCount)
		wantErr(t, CheckRecords(falseCount, false, MaxDecompressed), ErrCorrupt)

		recs := []kmsg.Record{{Key: []byte("a")}, {OffsetDelta: 2, Key: []byte("b")}}
		gapped := mustBuild(t, Options{Codec: c.codec}, recs)
		binary.BigEndian.PutUint32(gapped[offLastOffsetDelta:], 1)
		SetCRC(gapped)
		if err := CheckRecords(gapped, false, MaxDecompressed); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "offset delta 2, want 1") {
			t.Errorf("%s: offset deltas 0, 2: %v", c.name, err)
		}

		good := checkBatch(t, c.codec, 3, 10, false)
		garbage := reseal(good, bytes.Repeat([]byte{0xfe}, len(good)-HeaderSize), 3)
		if err := CheckRecords(garbage, false, MaxDecompressed); !errors.Is(err, ErrCorrupt) || errors.Is(err, ErrOverLimit) {
			t.Errorf("%s: garbage stream: %v", c.name, err)
		}

		bomb := mustBuild(t, Options{Codec: c.codec}, []kmsg.Record{{Value: make([]byte, 1<<20)}})
		wantErr(t, CheckRecords(bomb, false, 1<<19), ErrOverLimit)
	}
}

// BenchmarkCheckRecords walks 1 MiB batches of 100-byte and 1 KiB records,
// as the leader does for every uncompressed produce.
func BenchmarkCheckRecords(b *testing.B) {
	for _, size := range []int{100, 1024} {
		buf := checkBatch(b, CodecNone, (1<<20)/(size+20), size, false)
		b.Run(fmt.Sprintf("value=%d", size), func(b *testing.B) {
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				if err := CheckRecords(buf, true, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchValues returns n values of size bytes that compress about as JSON
// events do: field names repeat, numbers and ids vary.
func benchValues(n, size int) [][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	events := []string{"page_view", "click", "purchase", "signup", "logout"}
	out := make([][]byte, n)
	for i := range out {
		v := make([]byte, 0, size+64)
		for len(v) < size {
			v = fmt.Appendf(v, `{"id":%d,"user":"user-%d","event":"%s","amount":%d.%02d},`,
				rng.Uint64(), rng.IntN(100000), events[rng.IntN(len(events))], rng.IntN(1000), rng.IntN(100))
		}
		out[i] = v[:size]
	}
	return out
}

// BenchmarkCompressedCheck measures the leader's check of a compressed
// produced batch (CheckRecords: decompress into a pooled buffer, walk the
// records) per codec, on batches holding about 1 MiB of 100-byte or 1 KiB
// records, beside two references on the same batch in the same run: the
// codec's decompression alone into a reused buffer, and the CRC-32C pass
// every batch gets. Throughput is of the compressed batch (MB/s of
// produced bytes); docs/benchmarks.md gives the ratios.
func BenchmarkCompressedCheck(b *testing.B) {
	for _, c := range codecs[1:] {
		for _, size := range []int{100, 1024} {
			values := benchValues((1<<20)/(size+20), size)
			recs := make([]kmsg.Record, len(values))
			for i := range recs {
				recs[i] = kmsg.Record{OffsetDelta: int32(i), Key: fmt.Appendf(nil, "k%d", i), Value: values[i]}
			}
			buf := mustBuild(b, Options{ProducerID: NoProducerID, Codec: c.codec}, recs)
			name := fmt.Sprintf("codec=%s/value=%d", c.name, size)
			b.Run(name+"/op=check", func(b *testing.B) {
				b.SetBytes(int64(len(buf)))
				for b.Loop() {
					if err := CheckRecords(buf, false, MaxDecompressed); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(name+"/op=decompress", func(b *testing.B) {
				var dst []byte
				b.SetBytes(int64(len(buf)))
				for b.Loop() {
					out, err := decompressInto(dst, c.codec, buf[HeaderSize:], MaxDecompressed)
					if err != nil {
						b.Fatal(err)
					}
					dst = out
				}
			})
			b.Run(name+"/op=crc", func(b *testing.B) {
				b.SetBytes(int64(len(buf)))
				for b.Loop() {
					if ComputeCRC(buf) == 0 {
						b.Fatal("zero crc")
					}
				}
			})
		}
	}
}

// Concurrent checks and scans share the pooled slots: each sees its own
// batch's records (run with -race), more callers than slots wait their
// turn, and a slot's buffer grown by one batch serves the next.
func TestScratchConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := codecs[1+g%4]
			b := checkBatch(t, c.codec, 50+g*40, 10+g*30, false)
			for range 10 {
				if err := CheckRecords(b, true, MaxDecompressed); err != nil {
					errs <- fmt.Errorf("%s: %w", c.name, err)
					return
				}
				n := 0
				err := ScanRecords(b, MaxDecompressed, func(r *kmsg.Record) error {
					if want := fmt.Sprintf("k%d", n); string(r.Key) != want || len(r.Value) != 10+g*30 {
						return fmt.Errorf("record %d: key %q value of %d bytes, want %q and %d", n, r.Key, len(r.Value), want, 10+g*30)
					}
					n++
					return nil
				})
				if err != nil || n != 50+g*40 {
					errs <- fmt.Errorf("%s: scan: %d records, %v", c.name, n, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
