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

// dumper prints the files of one dump-log run.
type dumper struct {
	fsys      log.FS
	out       *bufio.Writer
	ctx       context.Context
	printData bool // --print-data-log
	verify    bool // --verify
}

// report is what dumping one file found.
type report struct {
	// problems is the corruption found, each already printed.
	problems []string
}

// runDumpLog implements `weir dump-log [--print-data-log] [--verify] FILE...`.
func runDumpLog(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fset := cli.NewFlagSet("dump-log", "[--print-data-log] [--verify] FILE...", stderr)
	d := &dumper{fsys: log.OSFS{}, out: bufio.NewWriter(stdout), ctx: ctx}
	fset.BoolVar(&d.printData, "print-data-log", false,
		"print each record after its batch: offset, timestamp, sizes, sequence, header keys, key and value as UTF-8 strings")
	fset.BoolVar(&d.verify, "verify", false,
		"fail when a batch fails its checks (length, magic, CRC, records), the log is torn, or an index entry does not match the log")
	if err := fset.Parse(args); err != nil {
		return err
	}
	if fset.NArg() == 0 {
		return cli.Usagef("no FILE given")
	}
	var failures []error
	for _, path := range fset.Args() {
		rep, err := d.dumpFile(path)
		if cerr := ctx.Err(); cerr != nil {
			d.out.Flush() // what was printed so far; the command failed anyway
			return cerr
		}
		switch {
		case err != nil:
			failures = append(failures, fmt.Errorf("%s: %w", path, err))
		case d.verify && len(rep.problems) > 0:
			failures = append(failures, fmt.Errorf("%s: verify found %d problem(s), the first: %s", path, len(rep.problems), rep.problems[0]))
		}
	}
	if err := d.out.Flush(); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return errors.Join(failures...)
}

// dumpFile prints one file, chosen by its suffix. It returns an error when
// the file cannot be read or dumped at all; corruption is in the report.
func (d *dumper) dumpFile(path string) (*report, error) {
	var dump func(string, *report) error
	switch filepath.Ext(path) {
	case ".log":
		dump = d.dumpLog
	case ".index":
		dump = d.dumpOffsetIndex
	case ".timeindex":
		dump = d.dumpTimeIndex
	default:
		return nil, errors.New("unknown file type (want .log, .index or .timeindex)")
	}
	fmt.Fprintf(d.out, "Dumping %s\n", path)
	rep := &report{}
	return rep, dump(path, rep)
}

// problem prints err, corruption found in a file, one "error:" line per line
// of its message (an errors.Join holds one problem a line), and records it.
func (d *dumper) problem(rep *report, err error) {
	for line := range strings.SplitSeq(err.Error(), "\n") {
		fmt.Fprintf(d.out, "error: %s\n", line)
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
	fmt.Fprintf(d.out, "Starting offset: %d\n", base)
	end, prevLast := int64(0), base-1
	err = log.ScanLogFile(d.fsys, path, func(pos int64, b []byte, verr error) error {
		if err := d.ctx.Err(); err != nil {
			return err
		}
		end = pos + int64(len(b))
		d.printBatch(pos, b, verr == nil)
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
			fmt.Fprintf(d.out, "Found %d invalid bytes at the end of %s\n", size-end, filepath.Base(path))
		}
	}
	return d.corruptOrFail(rep, err)
}

// printBatch prints the line of the batch b at pos, with Kafka's fields in
// Kafka's order. The scanner guarantees b holds at least a header with a
// sane length, so ParseHeader cannot fail.
func (d *dumper) printBatch(pos int64, b []byte, valid bool) {
	rb, err := batch.ParseHeader(b)
	if err != nil {
		return
	}
	fmt.Fprintf(d.out, "baseOffset: %d lastOffset: %d count: %d baseSequence: %d lastSequence: %d "+
		"producerId: %d producerEpoch: %d partitionLeaderEpoch: %d isTransactional: %t isControl: %t "+
		"deleteHorizonMs: %s position: %d %s: %d size: %d magic: %d compresscodec: %s crc: %d isvalid: %t\n",
		rb.FirstOffset, rb.FirstOffset+int64(rb.LastOffsetDelta), rb.NumRecords, rb.FirstSequence,
		lastSequence(rb.FirstSequence, rb.LastOffsetDelta), rb.ProducerID, rb.ProducerEpoch,
		rb.PartitionLeaderEpoch, rb.Attributes&batch.TransactionalBit != 0, rb.Attributes&batch.ControlBit != 0,
		deleteHorizon(&rb), pos, timestampType(rb.Attributes), rb.MaxTimestamp, len(b), rb.Magic,
		codecName(rb.Attributes), uint32(rb.CRC), valid)
}

// records decodes the records of the valid batch b, printing a line for each
// with --print-data-log. It returns the first decoding error; the records
// of a batch that fails are not printed (ScanRecords checks them all first).
func (d *dumper) records(b []byte) error {
	rb, err := batch.ParseHeader(b)
	if err != nil {
		return err
	}
	return batch.ScanRecords(b, recordLimit, func(r *kmsg.Record) error {
		if !d.printData {
			return nil
		}
		fmt.Fprintf(d.out, "| offset: %d %s: %d keySize: %d valueSize: %d sequence: %d headerKeys: [%s]",
			rb.FirstOffset+int64(r.OffsetDelta), timestampType(rb.Attributes), batch.Timestamp(b, r),
			nullableLen(r.Key), nullableLen(r.Value), recordSequence(rb.FirstSequence, r.OffsetDelta), headerKeys(r.Headers))
		if rb.Attributes&batch.ControlBit != 0 {
			d.out.WriteString(controlRecord(r))
		} else {
			if r.Key != nil {
				fmt.Fprintf(d.out, " key: %s", utf8String(r.Key))
			}
			if r.Value != nil {
				fmt.Fprintf(d.out, " payload: %s", utf8String(r.Value))
			}
		}
		return d.out.WriteByte('\n')
	})
}

// dumpOffsetIndex prints a .index file and checks it against the .log next
// to it, if there is one.
func (d *dumper) dumpOffsetIndex(path string, rep *report) error {
	entries, err := log.ReadOffsetIndex(d.fsys, path)
	if err != nil {
		return d.corruptOrFail(rep, err)
	}
	for _, e := range entries {
		fmt.Fprintf(d.out, "offset: %d position: %d\n", e.Offset, e.Position)
	}
	return d.checkIndex(path, ".index", rep, log.CheckOffsetIndex)
}

// dumpTimeIndex prints a .timeindex file and checks it against the .log
// next to it, if there is one.
func (d *dumper) dumpTimeIndex(path string, rep *report) error {
	entries, err := log.ReadTimeIndex(d.fsys, path)
	if err != nil {
		return d.corruptOrFail(rep, err)
	}
	for _, e := range entries {
		fmt.Fprintf(d.out, "timestamp: %d offset: %d\n", e.Timestamp, e.Offset)
	}
	return d.checkIndex(path, ".timeindex", rep, log.CheckTimeIndex)
}

// checkIndex runs check on the index at path and the .log file beside it,
// or notes that there is no such file.
func (d *dumper) checkIndex(path, suffix string, rep *report, check func(log.FS, string, string) error) error {
	logPath := strings.TrimSuffix(path, suffix) + ".log"
	if _, err := d.fsys.Stat(logPath); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(d.out, "Not checked against a log: %s does not exist\n", logPath)
		return nil
	}
	return d.corruptOrFail(rep, check(d.fsys, path, logPath))
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

// deleteHorizon prints Kafka's OptionalLong deleteHorizonMs: the base
// timestamp when the delete horizon bit is set.
func deleteHorizon(rb *kmsg.RecordBatch) string {
	if rb.Attributes&batch.DeleteHorizonBit == 0 {
		return "OptionalLong.empty"
	}
	return fmt.Sprintf("OptionalLong[%d]", rb.FirstTimestamp)
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

// headerKeys joins header keys as Kafka's mkString(",") does.
func headerKeys(hs []kmsg.Header) string {
	keys := make([]string, len(hs))
	for i, h := range hs {
		keys[i] = utf8String([]byte(h.Key))
	}
	return strings.Join(keys, ",")
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

// controlRecord describes a control record as Kafka's dump does: the
// transaction marker of an ABORT or COMMIT, else the control type.
func controlRecord(r *kmsg.Record) string {
	if len(r.Key) < 4 {
		return fmt.Sprintf(" controlType: UNKNOWN(key of %d bytes)", len(r.Key))
	}
	id := int16(binary.BigEndian.Uint16(r.Key[2:]))
	name, ok := controlTypes[id]
	switch {
	case !ok:
		return fmt.Sprintf(" controlType: UNKNOWN(%d)", id)
	case id > 1:
		return fmt.Sprintf(" controlType: %s(%d)", name, id)
	case len(r.Value) < 6:
		return fmt.Sprintf(" endTxnMarker: %s coordinatorEpoch: unknown (value of %d bytes)", name, len(r.Value))
	}
	return fmt.Sprintf(" endTxnMarker: %s coordinatorEpoch: %d", name, int32(binary.BigEndian.Uint32(r.Value[2:])))
}
