package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/weirmq/weir/log"
)

// dumpSink receives what `weir dump-log` finds, in file order, and writes
// it in one --format: dumpText as kafka-dump-log.sh prints it, line by line,
// or dumpJSON as one JSON document.
type dumpSink interface {
	// beginFile starts the file at path, of kind "log", "index" or
	// "timeindex".
	beginFile(path, kind string)
	// startOffset is the base offset of a .log file, from its name.
	startOffset(base int64)
	// batch is a batch of a .log file.
	batch(b *batchView)
	// record is a record of the batch last given (with --print-data-log).
	record(r *recordView)
	// problem is one line of corruption found in the file.
	problem(line string)
	// invalidBytes is the torn tail of a .log file, n bytes of the file name.
	invalidBytes(n int64, name string)
	// offsetEntry and timeEntry are entries of an index file.
	offsetEntry(e log.OffsetIndexEntry)
	timeEntry(e log.TimeIndexEntry)
	// checkedAgainst names the .log an index was checked against;
	// notChecked the one it could not be because the file does not exist.
	checkedAgainst(logPath string)
	notChecked(logPath string)
	// endFile ends the file at path (begun or not: beginFile is not called
	// for a file of an unknown kind); err is why it could not be dumped.
	endFile(path string, err error) error
	// finish ends the output once every file is written.
	finish() error
}

// batchView is one batch as dump-log shows it: Kafka's fields, named as in
// kafka-dump-log.sh's line.
type batchView struct {
	BaseOffset           int64  `json:"base_offset"`
	LastOffset           int64  `json:"last_offset"`
	Count                int32  `json:"count"`
	BaseSequence         int32  `json:"base_sequence"`
	LastSequence         int32  `json:"last_sequence"`
	ProducerID           int64  `json:"producer_id"`
	ProducerEpoch        int16  `json:"producer_epoch"`
	PartitionLeaderEpoch int32  `json:"partition_leader_epoch"`
	Transactional        bool   `json:"transactional"`
	Control              bool   `json:"control"`
	DeleteHorizonMs      *int64 `json:"delete_horizon_ms"` // null when the batch has none
	Position             int64  `json:"position"`
	TimestampType        string `json:"timestamp_type"` // CreateTime or LogAppendTime
	BaseTimestamp        int64  `json:"base_timestamp"`
	MaxTimestamp         int64  `json:"max_timestamp"`
	Size                 int    `json:"size"`
	Magic                int8   `json:"magic"`
	Compression          string `json:"compression"` // Kafka's codec name: none, gzip, snappy, lz4, zstd
	CRC                  uint32 `json:"crc"`
	Valid                bool   `json:"valid"`
	// Records are the batch's records with --print-data-log.
	Records []*recordView `json:"records,omitempty"`
}

// recordView is one record as --print-data-log shows it.
type recordView struct {
	Offset    int64 `json:"offset"`
	Timestamp int64 `json:"timestamp"` // of the batch's timestamp type
	KeySize   int   `json:"key_size"`  // -1 for a null key
	ValueSize int   `json:"value_size"`
	Sequence  int32 `json:"sequence"`
	// Key and Value are decoded as UTF-8 as the text form shows them; null
	// when null, and for a control record (Control describes it).
	Key     *string      `json:"key"`
	Value   *string      `json:"value"`
	Headers []headerView `json:"headers"`
	Control *controlView `json:"control,omitempty"`
}

// headerView is a record header, its key and value decoded as UTF-8.
type headerView struct {
	Key   string  `json:"key"`
	Value *string `json:"value"` // null when null
}

// controlView is what a control record's key and value say.
type controlView struct {
	// Type is Kafka's ControlRecordType name, or UNKNOWN.
	Type string `json:"type"`
	// TypeID is the type the key holds; null when the key is too short.
	TypeID *int16 `json:"type_id"`
	// CoordinatorEpoch is the coordinator epoch of an ABORT or COMMIT marker
	// whose value holds one.
	CoordinatorEpoch *int32 `json:"coordinator_epoch,omitempty"`

	keyLen, valueLen int
}

// text is the control record's part of the --print-data-log line, as
// Kafka's dump prints it: the transaction marker of an ABORT or COMMIT,
// else the control type.
func (c *controlView) text() string {
	switch {
	case c.TypeID == nil:
		return fmt.Sprintf(" controlType: UNKNOWN(key of %d bytes)", c.keyLen)
	case c.Type == "UNKNOWN":
		return fmt.Sprintf(" controlType: UNKNOWN(%d)", *c.TypeID)
	case *c.TypeID > 1:
		return fmt.Sprintf(" controlType: %s(%d)", c.Type, *c.TypeID)
	case c.CoordinatorEpoch == nil:
		return fmt.Sprintf(" endTxnMarker: %s coordinatorEpoch: unknown (value of %d bytes)", c.Type, c.valueLen)
	}
	return fmt.Sprintf(" endTxnMarker: %s coordinatorEpoch: %d", c.Type, *c.CoordinatorEpoch)
}

// dumpText writes what dump-log finds as kafka-dump-log.sh does.
type dumpText struct {
	out *bufio.Writer
	// tsType is the timestamp type of the batch last given, which each of
	// its record lines names.
	tsType string
}

func (t *dumpText) beginFile(path, _ string) { fmt.Fprintf(t.out, "Dumping %s\n", path) }

func (t *dumpText) startOffset(base int64) { fmt.Fprintf(t.out, "Starting offset: %d\n", base) }

func (t *dumpText) batch(b *batchView) {
	horizon := "OptionalLong.empty"
	if b.DeleteHorizonMs != nil {
		horizon = fmt.Sprintf("OptionalLong[%d]", *b.DeleteHorizonMs)
	}
	t.tsType = b.TimestampType
	fmt.Fprintf(t.out, "baseOffset: %d lastOffset: %d count: %d baseSequence: %d lastSequence: %d "+
		"producerId: %d producerEpoch: %d partitionLeaderEpoch: %d isTransactional: %t isControl: %t "+
		"deleteHorizonMs: %s position: %d %s: %d size: %d magic: %d compresscodec: %s crc: %d isvalid: %t\n",
		b.BaseOffset, b.LastOffset, b.Count, b.BaseSequence, b.LastSequence, b.ProducerID, b.ProducerEpoch,
		b.PartitionLeaderEpoch, b.Transactional, b.Control, horizon, b.Position, b.TimestampType, b.MaxTimestamp,
		b.Size, b.Magic, b.Compression, b.CRC, b.Valid)
}

func (t *dumpText) record(r *recordView) {
	keys := make([]string, len(r.Headers))
	for i, h := range r.Headers {
		keys[i] = h.Key
	}
	fmt.Fprintf(t.out, "| offset: %d %s: %d keySize: %d valueSize: %d sequence: %d headerKeys: [%s]",
		r.Offset, t.tsType, r.Timestamp, r.KeySize, r.ValueSize, r.Sequence, strings.Join(keys, ","))
	if r.Control != nil {
		t.out.WriteString(r.Control.text())
	} else {
		if r.Key != nil {
			fmt.Fprintf(t.out, " key: %s", *r.Key)
		}
		if r.Value != nil {
			fmt.Fprintf(t.out, " payload: %s", *r.Value)
		}
	}
	t.out.WriteByte('\n')
}

func (t *dumpText) problem(line string) { fmt.Fprintf(t.out, "error: %s\n", line) }

func (t *dumpText) invalidBytes(n int64, name string) {
	fmt.Fprintf(t.out, "Found %d invalid bytes at the end of %s\n", n, name)
}

func (t *dumpText) offsetEntry(e log.OffsetIndexEntry) {
	fmt.Fprintf(t.out, "offset: %d position: %d\n", e.Offset, e.Position)
}

func (t *dumpText) timeEntry(e log.TimeIndexEntry) {
	fmt.Fprintf(t.out, "timestamp: %d offset: %d\n", e.Timestamp, e.Offset)
}

func (t *dumpText) checkedAgainst(string) {}

func (t *dumpText) notChecked(logPath string) {
	fmt.Fprintf(t.out, "Not checked against a log: %s does not exist\n", logPath)
}

func (t *dumpText) endFile(string, error) error { return nil }

func (t *dumpText) finish() error { return nil }

// fileView is one file of `weir dump-log --format json`.
type fileView struct {
	Path string `json:"path"`
	// Kind is log, index or timeindex; empty for a file of another kind.
	Kind string `json:"kind,omitempty"`
	// StartOffset is a .log file's base offset, from its name.
	StartOffset *int64       `json:"start_offset,omitempty"`
	Batches     []*batchView `json:"batches,omitempty"`
	// InvalidBytes is the size of a torn tail of a .log file.
	InvalidBytes *int64 `json:"invalid_bytes,omitempty"`
	// Entries are an index's entries: offsetEntryView or timeEntryView.
	Entries []any `json:"entries,omitempty"`
	// CheckedAgainst is the .log an index was checked against;
	// NotCheckedAgainst the one that does not exist.
	CheckedAgainst    string `json:"checked_against,omitempty"`
	NotCheckedAgainst string `json:"not_checked_against,omitempty"`
	// Problems are the corruption found, as the text form's "error:" lines;
	// with --verify any makes the command fail.
	Problems []string `json:"problems"`
	// Error is why the file could not be dumped at all.
	Error string `json:"error,omitempty"`
}

// offsetEntryView is an entry of a .index file.
type offsetEntryView struct {
	Offset   int64 `json:"offset"`
	Position int64 `json:"position"`
}

// timeEntryView is an entry of a .timeindex file.
type timeEntryView struct {
	Timestamp int64 `json:"timestamp"`
	Offset    int64 `json:"offset"`
}

// dumpJSON writes what dump-log finds as one JSON document, {"files":
// [...]}: it holds one file at a time and writes each when it ends, so a
// run over many files holds only the largest.
type dumpJSON struct {
	out   *bufio.Writer
	cur   *fileView
	files int // written so far
}

func (j *dumpJSON) beginFile(path, kind string) {
	j.cur = &fileView{Path: path, Kind: kind, Problems: []string{}}
}

func (j *dumpJSON) startOffset(base int64) { j.cur.StartOffset = &base }

func (j *dumpJSON) batch(b *batchView) { j.cur.Batches = append(j.cur.Batches, b) }

func (j *dumpJSON) record(r *recordView) {
	if n := len(j.cur.Batches); n > 0 {
		b := j.cur.Batches[n-1]
		b.Records = append(b.Records, r)
	}
}

func (j *dumpJSON) problem(line string) { j.cur.Problems = append(j.cur.Problems, line) }

func (j *dumpJSON) invalidBytes(n int64, _ string) { j.cur.InvalidBytes = &n }

func (j *dumpJSON) offsetEntry(e log.OffsetIndexEntry) {
	j.cur.Entries = append(j.cur.Entries, offsetEntryView{Offset: e.Offset, Position: e.Position})
}

func (j *dumpJSON) timeEntry(e log.TimeIndexEntry) {
	j.cur.Entries = append(j.cur.Entries, timeEntryView{Timestamp: e.Timestamp, Offset: e.Offset})
}

func (j *dumpJSON) checkedAgainst(logPath string) { j.cur.CheckedAgainst = logPath }

func (j *dumpJSON) notChecked(logPath string) { j.cur.NotCheckedAgainst = logPath }

func (j *dumpJSON) endFile(path string, err error) error {
	f := j.cur
	j.cur = nil
	if f == nil {
		f = &fileView{Path: path, Problems: []string{}}
	}
	if err != nil {
		f.Error = err.Error()
	}
	b, merr := json.MarshalIndent(f, "    ", "  ")
	if merr != nil {
		return fmt.Errorf("write json of %s: %w", path, merr)
	}
	if j.files == 0 {
		j.out.WriteString("{\n  \"files\": [\n    ")
	} else {
		j.out.WriteString(",\n    ")
	}
	j.files++
	_, werr := j.out.Write(b)
	return werr
}

func (j *dumpJSON) finish() error {
	if j.files == 0 {
		_, err := j.out.WriteString("{\n  \"files\": []\n}\n")
		return err
	}
	_, err := j.out.WriteString("\n  ]\n}\n")
	return err
}
