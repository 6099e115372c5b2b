package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/weirmq/weir/internal/harness"
	"github.com/weirmq/weir/log"
	"github.com/weirmq/weir/log/batch"
)

// TestMain removes the weir binary the harness builds for the process tests.
func TestMain(m *testing.M) { harness.Main(m) }

// dumpIndexInterval is the index.interval.bytes of the test segment: small,
// so that the indexes hold several entries.
const dumpIndexInterval = 150

// dumpBatch is one batch of the test segment and what its lines must show.
type dumpBatch struct {
	opts    batch.Options
	records []kmsg.Record
	epoch   int32 // partition leader epoch the leader assigns

	// Filled in when the segment is written.
	data []byte // the batch as stored (base offset and epoch set)
	pos  int64  // byte position in the .log
}

// rec builds a record with offset delta i and timestamp delta i; a nil key
// or value stays null.
func dumpRecord(i int, key, value []byte, headers ...string) kmsg.Record {
	r := kmsg.Record{OffsetDelta: int32(i), TimestampDelta64: int64(i), Key: key, Value: value}
	for _, h := range headers {
		r.Headers = append(r.Headers, kmsg.Header{Key: h, Value: []byte("v-" + h)})
	}
	return r
}

// dumpNotIdempotent are the producer fields of a producer that is not idempotent.
func dumpNotIdempotent(o batch.Options) batch.Options {
	o.ProducerID, o.ProducerEpoch, o.BaseSequence = batch.NoProducerID, batch.NoProducerEpoch, batch.NoSequence
	return o
}

// dumpBatches are the batches of the test segment: every codec, an
// idempotent producer (its sequence wrapping past MaxInt32), LogAppendTime,
// a delete horizon, a transaction and its commit marker, null keys and
// values, headers, and two leader epochs.
func dumpBatches() []*dumpBatch {
	const ts = 1661753909195
	maxTs := int64(ts + 5000)
	commitKey := []byte{0, 0, 0, 1}         // version 0, type COMMIT
	commitValue := []byte{0, 0, 0, 0, 0, 4} // version 0, coordinator epoch 4
	big := bytes.Repeat([]byte("compressible "), 20)
	return []*dumpBatch{
		{opts: dumpNotIdempotent(batch.Options{BaseTimestamp: ts}), epoch: 11, records: []kmsg.Record{
			dumpRecord(0, []byte("foo"), []byte("hello")),
			dumpRecord(1, []byte("bar"), []byte("world"), "h1", "h2"),
		}},
		{opts: batch.Options{Codec: batch.CodecGzip, ProducerID: 7000, ProducerEpoch: 3, BaseSequence: 5, BaseTimestamp: ts + 100}, epoch: 11,
			records: []kmsg.Record{dumpRecord(0, nil, big), dumpRecord(1, []byte("k"), nil), dumpRecord(2, []byte("k2"), []byte("v2"), "trace")}},
		{opts: dumpNotIdempotent(batch.Options{Codec: batch.CodecSnappy, BaseTimestamp: ts + 200}), epoch: 11,
			records: []kmsg.Record{dumpRecord(0, []byte("s"), big)}},
		{opts: batch.Options{Codec: batch.CodecLz4, ProducerID: 7001, ProducerEpoch: 0, BaseSequence: math.MaxInt32 - 1, BaseTimestamp: ts + 300}, epoch: 12,
			records: []kmsg.Record{dumpRecord(0, []byte("a"), big), dumpRecord(1, []byte("b"), []byte("x")), dumpRecord(2, []byte("c"), []byte("\xff\xfeok"))}},
		{opts: dumpNotIdempotent(batch.Options{Codec: batch.CodecZstd, LogAppendTime: true, MaxTimestamp: &maxTs, BaseTimestamp: ts + 400}), epoch: 12,
			records: []kmsg.Record{dumpRecord(0, []byte("z"), big), dumpRecord(1, []byte("zz"), []byte("zzz"))}},
		{opts: dumpNotIdempotent(batch.Options{DeleteHorizon: true, BaseTimestamp: ts + 86_400_000}), epoch: 12,
			records: []kmsg.Record{dumpRecord(0, []byte("tombstone"), nil)}},
		{opts: batch.Options{Transactional: true, ProducerID: 8000, ProducerEpoch: 1, BaseSequence: 0, BaseTimestamp: ts + 600}, epoch: 12,
			records: []kmsg.Record{dumpRecord(0, []byte("tx"), []byte("in a transaction"))}},
		{opts: batch.Options{Transactional: true, Control: true, ProducerID: 8000, ProducerEpoch: 1, BaseSequence: batch.NoSequence, BaseTimestamp: ts + 700}, epoch: 12,
			records: []kmsg.Record{dumpRecord(0, commitKey, commitValue)}},
	}
}

// writeDumpSegment writes batches through a log.Manager into a new
// directory, closes the manager, and returns the segment's .log path.
func writeDumpSegment(t *testing.T, batches []*dumpBatch) string {
	t.Helper()
	m, err := log.OpenManager(log.ManagerConfig{Dir: t.TempDir(), NoBackground: true,
		Now: func() time.Time { return time.UnixMilli(1661753999000) }})
	if err != nil {
		t.Fatal(err)
	}
	cfg := log.DefaultConfig()
	cfg.IndexIntervalBytes = dumpIndexInterval
	l, err := m.OpenLog(log.TopicPartition{Topic: "dump", Partition: 0}, cfg, [16]byte{1})
	if err != nil {
		t.Fatal(err)
	}
	pos := int64(0)
	for i, tb := range batches {
		b, err := batch.Build(tb.opts, tb.records)
		if err != nil {
			t.Fatalf("build batch %d: %v", i, err)
		}
		if _, err := l.Append(b, log.AppendOptions{AssignOffsets: true, LeaderEpoch: tb.epoch}); err != nil {
			t.Fatalf("append batch %d: %v", i, err)
		}
		tb.data, tb.pos = b, pos
		pos += int64(len(b))
	}
	dir := l.Dir()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, fmt.Sprintf("%020d.log", 0))
}

// dumpLog runs `weir dump-log args...` in-process.
func dumpLog(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := runDumpLog(context.Background(), args, &out, &errOut)
	if errOut.Len() > 0 {
		t.Logf("stderr: %s", errOut.String())
	}
	return out.String(), err
}

// wantBatchLine is the line kafka-dump-log.sh prints for tb, written out
// from what the test put in the batch (the CRC and size as Build encoded
// them, the offsets and epoch the leader assigned).
func wantBatchLine(tb *dumpBatch) string {
	base := int64(binary.BigEndian.Uint64(tb.data))
	last := base + int64(len(tb.records)) - 1
	lastSeq := int32(-1)
	if tb.opts.BaseSequence >= 0 {
		lastSeq = tb.opts.BaseSequence + int32(len(tb.records)) - 1
		if tb.opts.BaseSequence == math.MaxInt32-1 {
			lastSeq = 0 // wrapped: MaxInt32-1, MaxInt32, 0
		}
	}
	horizon := "OptionalLong.empty"
	if tb.opts.DeleteHorizon {
		horizon = fmt.Sprintf("OptionalLong[%d]", tb.opts.BaseTimestamp)
	}
	tsType, maxTs := "CreateTime", tb.opts.BaseTimestamp+int64(len(tb.records))-1
	if tb.opts.LogAppendTime {
		tsType, maxTs = "LogAppendTime", *tb.opts.MaxTimestamp
	}
	codec := []string{"none", "gzip", "snappy", "lz4", "zstd"}[tb.opts.Codec]
	crc := binary.BigEndian.Uint32(tb.data[17:])
	return fmt.Sprintf("baseOffset: %d lastOffset: %d count: %d baseSequence: %d lastSequence: %d producerId: %d "+
		"producerEpoch: %d partitionLeaderEpoch: %d isTransactional: %t isControl: %t deleteHorizonMs: %s "+
		"position: %d %s: %d size: %d magic: 2 compresscodec: %s crc: %d isvalid: true",
		base, last, len(tb.records), tb.opts.BaseSequence, lastSeq, tb.opts.ProducerID, tb.opts.ProducerEpoch,
		tb.epoch, tb.opts.Transactional, tb.opts.Control, horizon, tb.pos, tsType, maxTs, len(tb.data), codec, crc)
}

func TestDumpLogSegment(t *testing.T) {
	batches := dumpBatches()
	logPath := writeDumpSegment(t, batches)
	out, err := dumpLog(t, logPath)
	if err != nil {
		t.Fatalf("dump-log: %v\n%s", err, out)
	}
	want := []string{"Dumping " + logPath, "Starting offset: 0"}
	for _, tb := range batches {
		want = append(want, wantBatchLine(tb))
	}
	compareDumpLines(t, out, want)
	if strings.Contains(out, "error:") {
		t.Errorf("unexpected output:\n%s", out)
	}
	// The seed's example line, field for field, for the first batch shape.
	if !strings.Contains(out, "baseOffset: 0 lastOffset: 1 count: 2 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 11 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1661753909196 size: ") {
		t.Errorf("first batch line does not read like Kafka's:\n%s", out)
	}
}

// compareDumpLines fails t unless out holds exactly the lines want.
func compareDumpLines(t *testing.T, out string, want []string) {
	t.Helper()
	got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Errorf("line %d:\n got: %s\nwant: %s", i, g, w)
		}
	}
}

func TestDumpLogPrintDataLog(t *testing.T) {
	batches := dumpBatches()
	logPath := writeDumpSegment(t, batches)
	out, err := dumpLog(t, "--print-data-log", logPath)
	if err != nil {
		t.Fatalf("dump-log: %v\n%s", err, out)
	}
	big := strings.Repeat("compressible ", 20)
	want := []string{"Dumping " + logPath, "Starting offset: 0",
		wantBatchLine(batches[0]),
		"| offset: 0 CreateTime: 1661753909195 keySize: 3 valueSize: 5 sequence: -1 headerKeys: [] key: foo payload: hello",
		"| offset: 1 CreateTime: 1661753909196 keySize: 3 valueSize: 5 sequence: -1 headerKeys: [h1,h2] key: bar payload: world",
		wantBatchLine(batches[1]),
		"| offset: 2 CreateTime: 1661753909295 keySize: -1 valueSize: 260 sequence: 5 headerKeys: [] payload: " + big,
		"| offset: 3 CreateTime: 1661753909296 keySize: 1 valueSize: -1 sequence: 6 headerKeys: [] key: k",
		"| offset: 4 CreateTime: 1661753909297 keySize: 2 valueSize: 2 sequence: 7 headerKeys: [trace] key: k2 payload: v2",
		wantBatchLine(batches[2]),
		"| offset: 5 CreateTime: 1661753909395 keySize: 1 valueSize: 260 sequence: -1 headerKeys: [] key: s payload: " + big,
		wantBatchLine(batches[3]),
		"| offset: 6 CreateTime: 1661753909495 keySize: 1 valueSize: 260 sequence: 2147483646 headerKeys: [] key: a payload: " + big,
		"| offset: 7 CreateTime: 1661753909496 keySize: 1 valueSize: 1 sequence: 2147483647 headerKeys: [] key: b payload: x",
		"| offset: 8 CreateTime: 1661753909497 keySize: 1 valueSize: 4 sequence: 0 headerKeys: [] key: c payload: \uFFFD\uFFFDok",
		wantBatchLine(batches[4]),
		"| offset: 9 LogAppendTime: 1661753914195 keySize: 1 valueSize: 260 sequence: -1 headerKeys: [] key: z payload: " + big,
		"| offset: 10 LogAppendTime: 1661753914195 keySize: 2 valueSize: 3 sequence: -1 headerKeys: [] key: zz payload: zzz",
		wantBatchLine(batches[5]),
		"| offset: 11 CreateTime: 1661840309195 keySize: 9 valueSize: -1 sequence: -1 headerKeys: [] key: tombstone",
		wantBatchLine(batches[6]),
		"| offset: 12 CreateTime: 1661753909795 keySize: 2 valueSize: 16 sequence: 0 headerKeys: [] key: tx payload: in a transaction",
		wantBatchLine(batches[7]),
		"| offset: 13 CreateTime: 1661753909895 keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] endTxnMarker: COMMIT coordinatorEpoch: 4",
	}
	compareDumpLines(t, out, want)
}

// dumpKafkaIndexes computes the entries Kafka's rules give the segment of
// batches: an offset entry (last offset, position) once more than
// index.interval.bytes were appended since the last one, a time entry (max
// timestamp so far, last offset of its batch) beside it when the max grew,
// and a final time entry when the segment is closed.
func dumpKafkaIndexes(batches []*dumpBatch) (offsets, times []string) {
	since, maxTs, maxTsOff, lastTs := 0, int64(-1), int64(-1), int64(-1)
	for _, tb := range batches {
		last := int64(binary.BigEndian.Uint64(tb.data)) + int64(len(tb.records)) - 1
		if ts := int64(binary.BigEndian.Uint64(tb.data[35:])); ts > maxTs {
			maxTs, maxTsOff = ts, last
		}
		if since > dumpIndexInterval {
			offsets = append(offsets, fmt.Sprintf("offset: %d position: %d", last, tb.pos))
			if maxTs > lastTs {
				times = append(times, fmt.Sprintf("timestamp: %d offset: %d", maxTs, maxTsOff))
				lastTs = maxTs
			}
			since = 0
		}
		since += len(tb.data)
	}
	if maxTs > lastTs {
		times = append(times, fmt.Sprintf("timestamp: %d offset: %d", maxTs, maxTsOff))
	}
	return offsets, times
}

func TestDumpLogIndexes(t *testing.T) {
	batches := dumpBatches()
	logPath := writeDumpSegment(t, batches)
	stem := strings.TrimSuffix(logPath, ".log")
	offsets, times := dumpKafkaIndexes(batches)
	if len(offsets) < 3 || len(times) < 3 {
		t.Fatalf("test segment indexes too little: %q %q", offsets, times)
	}
	out, err := dumpLog(t, "--verify", stem+".index", stem+".timeindex")
	if err != nil {
		t.Fatalf("dump-log: %v\n%s", err, out)
	}
	want := append([]string{"Dumping " + stem + ".index"}, offsets...)
	want = append(want, "Dumping "+stem+".timeindex")
	compareDumpLines(t, out, append(want, times...))
}

// copyDumpFiles copies the named files of dir (a segment's) into a new directory
// and returns it.
func copyDumpFiles(t *testing.T, dir string, names ...string) string {
	t.Helper()
	dst := t.TempDir()
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, n), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// dumpSegmentNames are the file names of the test segment.
var dumpSegmentNames = []string{"00000000000000000000.log", "00000000000000000000.index", "00000000000000000000.timeindex"}

// corruptDumpCopy copies the test segment and flips a byte in the records of
// batch i; it returns the copy's .log path.
func corruptDumpCopy(t *testing.T, logPath string, tb *dumpBatch) string {
	t.Helper()
	dst := copyDumpFiles(t, filepath.Dir(logPath), dumpSegmentNames...)
	p := filepath.Join(dst, dumpSegmentNames[0])
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	data[tb.pos+int64(len(tb.data))-2] ^= 0x01
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDumpLogVerify(t *testing.T) {
	batches := dumpBatches()
	logPath := writeDumpSegment(t, batches)
	stem := strings.TrimSuffix(logPath, ".log")
	if out, err := dumpLog(t, "--verify", "--print-data-log", logPath, stem+".index", stem+".timeindex"); err != nil {
		t.Fatalf("--verify on a good segment: %v\n%s", err, out)
	}

	bad := corruptDumpCopy(t, logPath, batches[1])
	out, err := dumpLog(t, "--verify", bad)
	if err == nil {
		t.Fatalf("--verify passed a flipped byte:\n%s", out)
	}
	badLine := strings.Replace(wantBatchLine(batches[1]), "isvalid: true", "isvalid: false", 1)
	if !strings.Contains(out, badLine+"\nerror: ") || !strings.Contains(out, fmt.Sprintf("batch at position %d", batches[1].pos)) {
		t.Errorf("--verify output does not show the bad batch and where:\n%s", out)
	}
	if !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "crc") {
		t.Errorf("--verify error does not say what and where: %v", err)
	}
	for _, tb := range batches[2:] {
		if !strings.Contains(out, wantBatchLine(tb)) {
			t.Errorf("the batches after the bad one are not all printed:\n%s", out)
			break
		}
	}

	// Without --verify the corruption is printed, and the command succeeds.
	out, err = dumpLog(t, bad)
	if err != nil || !strings.Contains(out, "isvalid: false") {
		t.Errorf("without --verify: %v\n%s", err, out)
	}
}

func TestDumpLogVerifyTornAndIndex(t *testing.T) {
	batches := dumpBatches()
	logPath := writeDumpSegment(t, batches)
	dst := copyDumpFiles(t, filepath.Dir(logPath), dumpSegmentNames...)
	p := filepath.Join(dst, dumpSegmentNames[0])
	cut := batches[5].pos + 20
	if err := os.Truncate(p, cut); err != nil {
		t.Fatal(err)
	}
	out, err := dumpLog(t, "--verify", p)
	if err == nil || !strings.Contains(out, fmt.Sprintf("Found 20 invalid bytes at the end of %s", dumpSegmentNames[0])) ||
		!strings.Contains(out, fmt.Sprintf("position %d", batches[5].pos)) {
		t.Errorf("torn log: %v\n%s", err, out)
	}
	if strings.Count(out, "isvalid: true") != 5 {
		t.Errorf("torn log: want the 5 whole batches printed:\n%s", out)
	}
	idx := filepath.Join(dst, dumpSegmentNames[1])
	out, err = dumpLog(t, "--verify", idx)
	if err == nil || !strings.Contains(out, "error: ") || !strings.Contains(out, "past the end") && !strings.Contains(out, "no batch") {
		t.Errorf("index of a torn log: %v\n%s", err, out)
	}
	if out, err := dumpLog(t, idx); err != nil || !strings.Contains(out, "error: ") {
		t.Errorf("index of a torn log without --verify: %v\n%s", err, out)
	}

	// An index without its log is printed, with a note.
	alone := copyDumpFiles(t, filepath.Dir(logPath), dumpSegmentNames[1])
	out, err = dumpLog(t, "--verify", filepath.Join(alone, dumpSegmentNames[1]))
	if err != nil || !strings.Contains(out, "Not checked against a log") {
		t.Errorf("index alone: %v\n%s", err, out)
	}
}

func TestDumpLogBadArguments(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(other, []byte("hi"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, dumpSegmentNames[0])
	out, err := dumpLog(t, other, missing)
	if err == nil || !strings.Contains(err.Error(), "unknown file type") || !strings.Contains(err.Error(), missing) ||
		!errors.Is(err, os.ErrNotExist) {
		t.Errorf("unknown type and missing file: %v\n%s", err, out)
	}
	badName := filepath.Join(dir, "segment.log")
	if err := os.WriteFile(badName, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := dumpLog(t, badName); !errors.Is(err, log.ErrFileName) {
		t.Errorf("badly named log: %v", err)
	}
	if _, err := dumpLog(t); err == nil {
		t.Error("no FILE: no error")
	} else if code := exitStatus("dump-log", err, &bytes.Buffer{}); code != 2 {
		t.Errorf("no FILE: exit %d, want 2", code)
	}
}

// TestDumpLogRandomCorruption flips bytes and cuts copies of the test
// segment at random and runs dump-log --verify --print-data-log on them:
// it never panics, and fails on every change the format can detect (all but
// those of a batch's base offset and leader epoch, outside its CRC, and cuts
// at a batch boundary).
func TestDumpLogRandomCorruption(t *testing.T) {
	batches := dumpBatches()
	logPath := writeDumpSegment(t, batches)
	orig, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	dst := copyDumpFiles(t, filepath.Dir(logPath), dumpSegmentNames...)
	p := filepath.Join(dst, dumpSegmentNames[0])
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 200 {
		data := slices.Clone(orig)
		at := rng.IntN(len(data))
		cut := rng.IntN(4) == 0
		if cut {
			data = data[:at]
		} else {
			data[at] ^= byte(1 + rng.IntN(255))
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := dumpLog(t, "--verify", "--print-data-log", p)
		if err == nil && dumpMustDetect(batches, at, cut) {
			t.Fatalf("round %d: %s at byte %d not detected:\n%s", round, map[bool]string{true: "cut", false: "flip"}[cut], at, out)
		}
	}
}

// dumpMustDetect reports whether a flip or a cut at byte at of the test segment
// is corruption the format can detect.
func dumpMustDetect(batches []*dumpBatch, at int, cut bool) bool {
	for _, tb := range batches {
		rel := int64(at) - tb.pos
		if rel < 0 || rel >= int64(len(tb.data)) {
			continue
		}
		if cut {
			return rel != 0
		}
		return rel >= 8 && (rel < 12 || rel >= 16)
	}
	return true
}

// TestDumpLogBinaryVerify runs the built weir binary: dump-log --verify
// exits 0 on a good segment and 1 on a corrupted copy.
func TestDumpLogBinaryVerify(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the weir binary")
	}
	batches := dumpBatches()
	logPath := writeDumpSegment(t, batches)
	stem := strings.TrimSuffix(logPath, ".log")
	stdout, stderr, code := harness.Run(t, harness.Options{Args: []string{"dump-log", "--verify", logPath, stem + ".index", stem + ".timeindex"}})
	if code != 0 || !strings.Contains(stdout, wantBatchLine(batches[0])) {
		t.Errorf("weir dump-log --verify on a good segment: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	bad := corruptDumpCopy(t, logPath, batches[3])
	stdout, stderr, code = harness.Run(t, harness.Options{Args: []string{"dump-log", "--verify", bad}})
	if code != 1 || !strings.Contains(stdout, "isvalid: false") || !strings.Contains(stderr, "verify found") {
		t.Errorf("weir dump-log --verify on a corrupted copy: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if _, _, code := harness.Run(t, harness.Options{Args: []string{"dump-log", bad}}); code != 0 {
		t.Errorf("weir dump-log without --verify on a corrupted copy: exit %d, want 0", code)
	}
}

func TestDumpLogCancelled(t *testing.T) {
	logPath := writeDumpSegment(t, dumpBatches())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	if err := runDumpLog(ctx, []string{logPath}, &out, &out); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled dump-log returned %v", err)
	}
}

// dump-log --verify agrees with the leader's checks on produce: every batch
// produce accepts passes, and a batch produce refuses for its records (here
// a decompression bomb, which it once stored) is reported with its real
// problem.
func TestDumpLogVerifyAgreesWithProduce(t *testing.T) {
	batches := dumpBatches()
	for i, tb := range batches {
		b, err := batch.Build(tb.opts, tb.records)
		if err != nil {
			t.Fatal(err)
		}
		if err := batch.CheckRecords(b, false, batch.MaxDecompressed); err != nil {
			t.Fatalf("batch %d: the leader's check refuses a batch of the good segment: %v", i, err)
		}
	}
	good := writeDumpSegment(t, batches)
	if out, err := dumpLog(t, "--verify", good); err != nil {
		t.Fatalf("--verify of batches produce accepts: %v\n%s", err, out)
	}
	bomb := &dumpBatch{opts: dumpNotIdempotent(batch.Options{Codec: batch.CodecGzip, BaseTimestamp: 1661753909195}),
		records: []kmsg.Record{dumpRecord(0, []byte("k"), make([]byte, batch.MaxDecompressed+1))}}
	b, err := batch.Build(bomb.opts, bomb.records)
	if err != nil {
		t.Fatal(err)
	}
	if err := batch.CheckRecords(b, false, batch.MaxDecompressed); !errors.Is(err, batch.ErrOverLimit) {
		t.Fatalf("the leader's check of the bomb: %v, want ErrOverLimit", err)
	}
	bad := writeDumpSegment(t, append(dumpBatches(), bomb))
	out, err := dumpLog(t, "--verify", bad)
	want := fmt.Sprintf("decompresses past the limit of %d bytes", batch.MaxDecompressed)
	if err == nil || !strings.Contains(out, want) {
		t.Fatalf("--verify of a stored bomb: %v, want its problem (%q) in:\n%s", err, want, out)
	}
}
