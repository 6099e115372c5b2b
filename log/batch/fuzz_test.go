package batch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// fuzzLimit bounds decompression in the fuzz targets, small enough to keep
// them fast.
const fuzzLimit = 1 << 20

// seedBatches returns real batches: every codec, an empty compacted batch, a
// control batch, a xerial snappy batch, and two batches back to back.
func seedBatches(t testing.TB) [][]byte {
	var seeds [][]byte
	for _, c := range codecs {
		seeds = append(seeds,
			mustBuild(t, Options{Codec: c.codec, ProducerID: NoProducerID, BaseTimestamp: 1000}, testRecords(3)),
			mustBuild(t, Options{Codec: c.codec, LastOffsetDelta: new(int32(4))}, nil))
	}
	seeds = append(seeds, mustBuild(t, Options{Control: true, Transactional: true, ProducerID: 5},
		[]kmsg.Record{{Key: []byte{0, 0, 0, 1}, Value: []byte{0, 0, 0, 0, 0, 0}}}))

	plain := mustBuild(t, Options{}, testRecords(4))
	xerial := bytes.Clone(plain[:HeaderSize])
	xerial[offAttributes+1] |= CodecSnappy
	seeds = append(seeds, reseal(xerial, xerialFrame(plain[HeaderSize:], 16), 4))
	seeds = append(seeds, append(bytes.Clone(seeds[0]), seeds[1]...))
	return seeds
}

// FuzzValidate feeds arbitrary bytes to every decoder. None may panic;
// whatever Validate accepts must be one whole v2 batch whose CRC matches, and
// whatever Records accepts must hold consistent records that Build encodes
// back to the same records. Since random bytes rarely pass the CRC, each
// input is also tried with its magic, length and CRC fixed up, which lets the
// fuzzer reach the records.
func FuzzValidate(f *testing.F) {
	for _, s := range seedBatches(f) {
		f.Add(s)
	}
	f.Add(legacyMessage(1, []byte("k"), []byte("value")))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDecoders(t, b)
		if len(b) >= HeaderSize {
			fixed := bytes.Clone(b)
			fixed[offMagic] = CurrentMagic
			binary.BigEndian.PutUint32(fixed[offLength:], uint32(len(b)-LengthPrefix))
			SetCRC(fixed)
			checkDecoders(t, fixed)
		}
	})
}

// checkDecoders is FuzzValidate's check of one input.
func checkDecoders(t *testing.T, b []byte) {
	_, _ = Size(b)
	_, _ = ParseHeader(b)
	checkSplit(t, b)
	rb, err := Validate(b)
	if err != nil {
		if _, rerr := Records(b, fuzzLimit); rerr == nil {
			t.Fatalf("Records accepted what Validate rejects: %v", err)
		}
		return
	}
	if size, _ := Size(b); size != len(b) || rb.Magic != CurrentMagic || uint32(rb.CRC) != ComputeCRC(b) {
		t.Fatalf("Validate accepted size %d of %d bytes, magic %d, crc %x (computed %x)",
			size, len(b), rb.Magic, uint32(rb.CRC), ComputeCRC(b))
	}
	records, err := Records(b, fuzzLimit)
	n, sn := 0, 0
	ferr := ForEachRecord(b, fuzzLimit, func(*kmsg.Record) error { n++; return nil })
	serr := ScanRecords(b, fuzzLimit, func(*kmsg.Record) error { sn++; return nil })
	// ScanRecords checks the whole batch first: fn sees all records or none.
	if (err == nil) != (ferr == nil) || (err == nil) != (serr == nil) || (serr == nil && n != sn) || (serr != nil && sn != 0) {
		t.Fatalf("Records: %v; ForEachRecord: %v (%d records); ScanRecords: %v (%d records)", err, ferr, n, serr, sn)
	}
	checkRecordsAgrees(t, b, records, err)
	if err != nil {
		return
	}
	if len(records) != int(rb.NumRecords) || n != len(records) {
		t.Fatalf("%d records, ForEachRecord %d, header says %d", len(records), n, rb.NumRecords)
	}
	for i := range records {
		if d := records[i].OffsetDelta; d < 0 || d > rb.LastOffsetDelta {
			t.Fatalf("record %d: offset delta %d outside [0, %d]", i, d, rb.LastOffsetDelta)
		}
		_ = Timestamp(b, &records[i])
	}
	checkRebuild(t, b, rb, records)
}

// checkRecordsAgrees checks CheckRecords against Records (whose result is
// records, rerr): it accepts only what Records decodes, with offset deltas
// 0, 1, 2, ...; requiring keys never accepts more, and on a batch it
// accepts fails with ErrNoKey exactly when a record has no key.
func checkRecordsAgrees(t *testing.T, b []byte, records []kmsg.Record, rerr error) {
	err := CheckRecords(b, false, fuzzLimit)
	if err != nil {
		if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrTruncated) {
			t.Fatalf("CheckRecords: %v wraps neither ErrCorrupt nor ErrTruncated", err)
		}
		if errors.Is(err, ErrOverLimit) {
			if rerr == nil {
				t.Fatalf("CheckRecords: %v, but Records decoded the batch under the same limit", err)
			}
			if _, derr := Decompress(Attributes(b)&CodecMask, b[HeaderSize:], fuzzLimit); !errors.Is(derr, ErrOverLimit) {
				t.Fatalf("CheckRecords: %v, but the section decompresses under the limit: %v", err, derr)
			}
		}
		if kerr := CheckRecords(b, true, fuzzLimit); kerr == nil {
			t.Fatalf("CheckRecords accepted with keys required what it rejects without: %v", err)
		}
		return
	}
	if rerr != nil {
		t.Fatalf("CheckRecords accepted what Records rejects: %v", rerr)
	}
	keyless := false
	for i := range records {
		if records[i].OffsetDelta != int32(i) {
			t.Fatalf("CheckRecords accepted record %d with offset delta %d", i, records[i].OffsetDelta)
		}
		keyless = keyless || records[i].Key == nil
	}
	if kerr := CheckRecords(b, true, fuzzLimit); keyless != errors.Is(kerr, ErrNoKey) || (!keyless && kerr != nil) {
		t.Fatalf("CheckRecords with keys required: %v; a record without a key: %v", kerr, keyless)
	}
}

// checkSplit checks that Split's batches tile a prefix of b, and all of it
// when it returns no error.
func checkSplit(t *testing.T, b []byte) {
	batches, err := Split(b)
	pos := 0
	for i, s := range batches {
		if len(s) == 0 || &s[0] != &b[pos] {
			t.Fatalf("Split batch %d does not start at byte %d", i, pos)
		}
		pos += len(s)
	}
	if err == nil && pos != len(b) {
		t.Fatalf("Split covered %d of %d bytes without an error", pos, len(b))
	}
	if err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrTruncated) {
		t.Fatalf("Split error %v wraps neither ErrCorrupt nor ErrTruncated", err)
	}
}

// checkRebuild builds the decoded records again with b's header and checks
// that they decode the same. Build refuses offset deltas that do not rise,
// which Records accepts, as Kafka does.
func checkRebuild(t *testing.T, b []byte, rb kmsg.RecordBatch, records []kmsg.Record) {
	opts := Options{
		Codec: rb.Attributes & CodecMask, ProducerID: rb.ProducerID, ProducerEpoch: rb.ProducerEpoch,
		BaseSequence: rb.FirstSequence, Transactional: rb.Attributes&TransactionalBit != 0,
		Control: rb.Attributes&ControlBit != 0, LogAppendTime: rb.Attributes&LogAppendTimeBit != 0,
		DeleteHorizon: rb.Attributes&DeleteHorizonBit != 0, PartitionLeaderEpoch: rb.PartitionLeaderEpoch,
		BaseOffset: rb.FirstOffset, BaseTimestamp: rb.FirstTimestamp,
		LastOffsetDelta: &rb.LastOffsetDelta, MaxTimestamp: &rb.MaxTimestamp,
	}
	nb, err := Build(opts, records)
	if errors.Is(err, ErrBuild) {
		return
	}
	if err != nil {
		t.Fatalf("Build of decoded records: %v", err)
	}
	again, err := Records(nb, fuzzLimit+len(nb))
	if err != nil {
		t.Fatalf("Records of the rebuilt batch: %v", err)
	}
	for i := range again {
		if err := sameRecord(&again[i], &records[i]); err != nil {
			t.Fatalf("rebuilt record %d: %v", i, err)
		}
	}
	const known = CodecMask | LogAppendTimeBit | TransactionalBit | ControlBit | DeleteHorizonBit
	if Attributes(nb) != Attributes(b)&known || LastOffset(nb) != LastOffset(b) || MaxTimestamp(nb) != MaxTimestamp(b) {
		t.Fatalf("rebuilt header differs")
	}
}

// FuzzDecompress feeds arbitrary bytes to every codec's decoder under a
// limit. None may panic or return more than the limit, and whatever decodes
// must survive a round trip through Compress.
func FuzzDecompress(f *testing.F) {
	text := bytes.Repeat([]byte("fuzzing kafka record batches "), 40)
	for _, c := range codecs {
		z, err := Compress(c.codec, text)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(z)
	}
	f.Add(xerialFrame(text, 100))
	f.Add(binary.BigEndian.AppendUint32([]byte("\x82SNAPPY\x00\x00\x00\x00\x01\x00\x00\x00\x01"), 5))
	f.Fuzz(func(t *testing.T, b []byte) {
		const limit = 64 << 10
		for codec := int16(0); codec <= CodecZstd+1; codec++ {
			out, err := Decompress(codec, b, limit)
			if err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("codec %d: error %v does not wrap ErrCorrupt", codec, err)
				}
				continue
			}
			if len(out) > limit {
				t.Fatalf("codec %d: %d bytes past the limit %d", codec, len(out), limit)
			}
			z, err := Compress(codec, out)
			if err != nil {
				t.Fatalf("codec %d: Compress: %v", codec, err)
			}
			again, err := Decompress(codec, z, limit)
			if err != nil || !bytes.Equal(again, out) {
				t.Fatalf("codec %d: round trip of %d bytes: %d bytes, %v", codec, len(out), len(again), err)
			}
		}
	})
}
