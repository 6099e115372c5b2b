package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/weirmq/weir/internal/cli"
	"github.com/weirmq/weir/log"
	"github.com/weirmq/weir/log/batch"
)

// `weir dump-log` prints segment files the way Kafka's kafka-dump-log.sh
// --files does, so that output from either tool reads the same:
//
//	Dumping <path>
//	Starting offset: <base>                      (.log)
//	baseOffset: ... isvalid: true                (.log, one line per batch)
//	| offset: ... key: ... payload: ...          (.log with --print-data-log)
//	offset: <offset> position: <position>        (.index)
//	timestamp: <ms> offset: <offset>             (.timeindex)
//
// Corruption it finds (a batch that fails its checks, a torn tail, an index
// entry that does not match the log) is printed as "error: ..." lines where
// it is found; with --verify it also makes the command fail.

// recordLimit bounds the decompressed size of one batch's records: the
// bound the leader applies on produce, so --verify calls corrupt exactly
// the batches produce refuses for their records (and passes every batch it
// accepts).
const recordLimit = batch.MaxDecompressed

// dumper reads the files of one dump-log run and gives what it finds to
// its sink, which writes it in the --format asked for.
type dumper struct {
	fsys      log.FS
	sink      dumpSink
	ctx       context.Context
	printData bool // --print-data-log
	verify    bool // --verify
}

// report is what dumping one file found.
type report struct {
	// problems is the corruption found, each already given to the sink.
	problems []string
}

// runDumpLog implements `weir dump-log [--print-data-log] [--verify]
// [--format text|json] [--files FILE,...] FILE...`: the files of --files
// (Kafka's spelling, a comma-separated list) and then the positional ones,
// flags anywhere.
func runDumpLog(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fset := cli.NewFlagSet("dump-log", "[--print-data-log] [--verify] [--format text|json] [--files FILE,...] FILE...", stderr)
	d := &dumper{fsys: log.OSFS{}, ctx: ctx}
	format := cli.AddFormatFlag(fset)
	fset.BoolVar(&d.printData, "print-data-log", false,
		"print each record after its batch: offset, timestamp, sizes, sequence, header keys, key and value as UTF-8 strings")
	fset.BoolVar(&d.verify, "verify", false,
		"fail when a batch fails its checks (length, magic, CRC, records), the log is torn, or an index entry does not match the log")
	var files fileList
	fset.Var(&files, "files", "comma-separated `FILE,...` to dump, as kafka-dump-log.sh takes them; before the FILE arguments")
	if err := fset.Parse(args); err != nil {
		return err
	}
	out := bufio.NewWriter(stdout)
	if format.JSON() {
		d.sink = &dumpJSON{out: out}
	} else {
		d.sink = &dumpText{out: out}
	}
	paths := append(files.paths, fset.Args()...)
	if len(paths) == 0 {
		return cli.Usagef("no FILE given (name them as arguments or with --files)")
	}
	var failures []error
	for _, path := range paths {
		rep, err := d.dumpFile(path)
		if cerr := ctx.Err(); cerr != nil {
			out.Flush() // what was printed so far; the command failed anyway
			return cerr
		}
		if serr := d.sink.endFile(path, err); serr != nil {
			return fmt.Errorf("write output: %w", serr)
		}
		switch {
		case err != nil:
			failures = append(failures, fmt.Errorf("%s: %w", path, err))
		case d.verify && len(rep.problems) > 0:
			failures = append(failures, fmt.Errorf("%s: verify found %d problem(s), the first: %s", path, len(rep.problems), rep.problems[0]))
		}
	}
	if err := d.sink.finish(); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	if err := out.Flush(); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return errors.Join(failures...)
}

// dumpFile prints one file, chosen by its suffix. It returns an error when
// the file cannot be read or dumped at all; corruption is in the report.
func (d *dumper) dumpFile(path string) (*report, error) {
	var dump func(string, *report) error
	kind := strings.TrimPrefix(filepath.Ext(path), ".")
	switch kind {
	case "log":
		dump = d.dumpLog
	case "index":
		dump = d.dumpOffsetIndex
	case "timeindex":
		dump = d.dumpTimeIndex
	default:
		return nil, errors.New("unknown file type (want .log, .index or .timeindex)")
	}
	d.sink.beginFile(path, kind)
	rep := &report{}
	return rep, dump(path, rep)
}

// problem reports err, corruption found in a file, one problem per line of
// its message (an errors.Join holds one problem a line), and records it.
func (d *dumper) problem(rep *report, err error) {
	for line := range strings.SplitSeq(err.Error(), "\n") {
		d.sink.problem(line)
		rep.problems = append(rep.problems, line)
	}
}

// corruptOrFail records err as a problem when it is corruption, and returns
// it otherwise.
func (d *dumper) corruptOrFail(rep *report, err error) error {
	if errors.Is(err, log.ErrCorrupt) {
		d.problem(rep, err)
		return nil
	}
	return err
}

// dumpLog prints a .log file: a line per batch and, with --print-data-log, a
// line per record.
func (d *dumper) dumpLog(path string, rep *report) error {
	base, err := log.SegmentBaseOffset(path)
	if err != nil {
		return err
	}
	d.sink.startOffset(base)
	end, prevLast := int64(0), base-1
	err = log.ScanLogFile(d.fsys, path, func(pos int64, b []byte, verr error) error {
		if err := d.ctx.Err(); err != nil {
			return err
		}
		end = pos + int64(len(b))
		d.batch(pos, b, verr == nil)
		if verr != nil {
			d.problem(rep, verr)
			return nil
		}
		if first := batch.BaseOffset(b); first <= prevLast {
			d.problem(rep, fmt.Errorf("%w: %s: batch at position %d has base offset %d, not after the last offset %d before it",
				log.ErrCorrupt, path, pos, first, prevLast))
		}
		prevLast = batch.LastOffset(b)
		if d.printData || d.verify {
			if err := d.records(b); err != nil {
				d.problem(rep, fmt.Errorf("%w: %s: records of the batch at position %d: %w", log.ErrCorrupt, path, pos, err))
			}
		}
		return nil
	})
	if errors.Is(err, log.ErrCorrupt) {
		if size, serr := d.fsys.Stat(path); serr == nil {
			d.sink.invalidBytes(size-end, filepath.Base(path))
		}
	}
	return d.corruptOrFail(rep, err)
}

// batch gives the sink the batch b at pos, with Kafka's fields. The
// scanner guarantees b holds at least a header with a sane length, so
// ParseHeader cannot fail.
func (d *dumper) batch(pos int64, b []byte, valid bool) {
	rb, err := batch.ParseHeader(b)
	if err != nil {
		return
	}
	v := &batchView{
		BaseOffset: rb.FirstOffset, LastOffset: rb.FirstOffset + int64(rb.LastOffsetDelta), Count: rb.NumRecords,
		BaseSequence: rb.FirstSequence, LastSequence: lastSequence(rb.FirstSequence, rb.LastOffsetDelta),
		ProducerID: rb.ProducerID, ProducerEpoch: rb.ProducerEpoch, PartitionLeaderEpoch: rb.PartitionLeaderEpoch,
		Transactional: rb.Attributes&batch.TransactionalBit != 0, Control: rb.Attributes&batch.ControlBit != 0,
		Position: pos, TimestampType: timestampType(rb.Attributes), BaseTimestamp: rb.FirstTimestamp,
		MaxTimestamp: rb.MaxTimestamp, Size: len(b), Magic: rb.Magic, Compression: codecName(rb.Attributes),
		CRC: uint32(rb.CRC), Valid: valid,
	}
	if rb.Attributes&batch.DeleteHorizonBit != 0 { // Kafka's OptionalLong deleteHorizonMs: the base timestamp
		v.DeleteHorizonMs = &rb.FirstTimestamp
	}
	d.sink.batch(v)
}

// records decodes the records of the valid batch b, giving each to the sink
// with --print-data-log. It returns the first decoding error; the records
// of a batch that fails are not given (ScanRecords checks them all first).
func (d *dumper) records(b []byte) error {
	rb, err := batch.ParseHeader(b)
	if err != nil {
		return err
	}
	return batch.ScanRecords(b, recordLimit, func(r *kmsg.Record) error {
		if !d.printData {
			return nil
		}
		v := &recordView{
			Offset: rb.FirstOffset + int64(r.OffsetDelta), Timestamp: batch.Timestamp(b, r),
			KeySize: nullableLen(r.Key), ValueSize: nullableLen(r.Value),
			Sequence: recordSequence(rb.FirstSequence, r.OffsetDelta), Headers: make([]headerView, len(r.Headers)),
		}
		for i, h := range r.Headers {
			v.Headers[i] = headerView{Key: utf8String([]byte(h.Key)), Value: nullableString(h.Value)}
		}
		if rb.Attributes&batch.ControlBit != 0 {
			v.Control = controlRecord(r)
		} else {
			v.Key, v.Value = nullableString(r.Key), nullableString(r.Value)
		}
		d.sink.record(v)
		return nil
	})
}

// dumpOffsetIndex dumps a .index file and checks it against the .log next
// to it, if there is one.
func (d *dumper) dumpOffsetIndex(path string, rep *report) error {
	entries, err := log.ReadOffsetIndex(d.fsys, path)
	if err != nil {
		return d.corruptOrFail(rep, err)
	}
	for _, e := range entries {
		d.sink.offsetEntry(e)
	}
	return d.checkIndex(path, ".index", rep, log.CheckOffsetIndex)
}

// dumpTimeIndex dumps a .timeindex file and checks it against the .log
// next to it, if there is one.
func (d *dumper) dumpTimeIndex(path string, rep *report) error {
	entries, err := log.ReadTimeIndex(d.fsys, path)
	if err != nil {
		return d.corruptOrFail(rep, err)
	}
	for _, e := range entries {
		d.sink.timeEntry(e)
	}
	return d.checkIndex(path, ".timeindex", rep, log.CheckTimeIndex)
}

// checkIndex runs check on the index at path and the .log file beside it,
// or notes that there is no such file.
func (d *dumper) checkIndex(path, suffix string, rep *report, check func(log.FS, string, string) error) error {
	logPath := strings.TrimSuffix(path, suffix) + ".log"
	if _, err := d.fsys.Stat(logPath); errors.Is(err, fs.ErrNotExist) {
		d.sink.notChecked(logPath)
		return nil
	}
	d.sink.checkedAgainst(logPath)
	return d.corruptOrFail(rep, check(d.fsys, path, logPath))
}

// fileList is the --files flag: comma-separated paths, the flag repeatable.
type fileList struct{ paths []string }

// String joins the paths as Kafka's --files takes them.
func (f *fileList) String() string {
	if f == nil {
		return ""
	}
	return strings.Join(f.paths, ",")
}

// Set adds the comma-separated paths of s; an empty entry is a mistake.
func (f *fileList) Set(s string) error {
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p == "" {
			return fmt.Errorf("%q has an empty file name", s)
		}
		f.paths = append(f.paths, p)
	}
	return nil
}

// lastSequence is Kafka's DefaultRecordBatch.lastSequence: -1 without a
// base sequence, else the base sequence advanced by the last offset delta,
// wrapping past MaxInt32 to 0.
func lastSequence(base, lastOffsetDelta int32) int32 {
	if base == batch.NoSequence {
		return batch.NoSequence
	}
	return incrementSequence(base, lastOffsetDelta)
}

// recordSequence is Kafka's DefaultRecord sequence: -1 when the batch's base
// sequence is negative, else the base advanced by the offset delta.
func recordSequence(base, offsetDelta int32) int32 {
	if base < 0 {
		return batch.NoSequence
	}
	return incrementSequence(base, offsetDelta)
}

// incrementSequence is Kafka's DefaultRecordBatch.incrementSequence.
func incrementSequence(seq, inc int32) int32 {
	if seq > math.MaxInt32-inc {
		return inc - (math.MaxInt32 - seq) - 1
	}
	return seq + inc
}

// timestampType is Kafka's name of a batch's timestamp type.
func timestampType(attrs int16) string {
	if attrs&batch.LogAppendTimeBit != 0 {
		return "LogAppendTime"
	}
	return "CreateTime"
}

// codecName is Kafka's CompressionType name of a batch's codec.
func codecName(attrs int16) string {
	switch c := attrs & batch.CodecMask; c {
	case batch.CodecNone:
		return "none"
	case batch.CodecGzip:
		return "gzip"
	case batch.CodecSnappy:
		return "snappy"
	case batch.CodecLz4:
		return "lz4"
	case batch.CodecZstd:
		return "zstd"
	default:
		return fmt.Sprintf("unknown(%d)", c)
	}
}

// nullableLen is Kafka's key or value size: -1 for null.
func nullableLen(b []byte) int {
	if b == nil {
		return -1
	}
	return len(b)
}

// nullableString is b decoded as utf8String does, nil for null.
func nullableString(b []byte) *string {
	if b == nil {
		return nil
	}
	s := utf8String(b)
	return &s
}

// utf8String decodes b as UTF-8 as Kafka's StringDecoder does, each byte
// that starts no valid sequence becoming U+FFFD.
func utf8String(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	for _, r := range string(b) {
		sb.WriteRune(r) // an invalid byte ranges as utf8.RuneError, U+FFFD
	}
	return sb.String()
}

// Control record types (Kafka's ControlRecordType), keyed by type id.
var controlTypes = map[int16]string{
	0: "ABORT", 1: "COMMIT", 2: "LEADER_CHANGE", 3: "SNAPSHOT_HEADER",
	4: "SNAPSHOT_FOOTER", 5: "KRAFT_VERSION", 6: "KRAFT_VOTERS",
}

// controlRecord decodes a control record's key (version, type) and, for a
// transaction marker, its value (version, coordinator epoch).
func controlRecord(r *kmsg.Record) *controlView {
	c := &controlView{keyLen: len(r.Key), valueLen: len(r.Value)}
	if len(r.Key) < 4 {
		c.Type = "UNKNOWN"
		return c
	}
	id := int16(binary.BigEndian.Uint16(r.Key[2:]))
	c.TypeID = &id
	name, ok := controlTypes[id]
	if !ok {
		c.Type = "UNKNOWN"
		return c
	}
	c.Type = name
	if id <= 1 && len(r.Value) >= 6 {
		epoch := int32(binary.BigEndian.Uint32(r.Value[2:]))
		c.CoordinatorEpoch = &epoch
	}
	return c
}
