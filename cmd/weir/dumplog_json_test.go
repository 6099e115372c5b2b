package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// dumpJSONDoc is the document of `weir dump-log --format json`, decoded
// into the test's own types.
type dumpJSONDoc struct {
	Files []struct {
		Path         string `json:"path"`
		Kind         string `json:"kind"`
		StartOffset  *int64 `json:"start_offset"`
		InvalidBytes *int64 `json:"invalid_bytes"`
		Batches      []struct {
			BaseOffset           int64  `json:"base_offset"`
			LastOffset           int64  `json:"last_offset"`
			Count                int    `json:"count"`
			BaseSequence         int32  `json:"base_sequence"`
			LastSequence         int32  `json:"last_sequence"`
			ProducerID           int64  `json:"producer_id"`
			ProducerEpoch        int16  `json:"producer_epoch"`
			PartitionLeaderEpoch int32  `json:"partition_leader_epoch"`
			Transactional        bool   `json:"transactional"`
			Control              bool   `json:"control"`
			DeleteHorizonMs      *int64 `json:"delete_horizon_ms"`
			Position             int64  `json:"position"`
			TimestampType        string `json:"timestamp_type"`
			BaseTimestamp        int64  `json:"base_timestamp"`
			MaxTimestamp         int64  `json:"max_timestamp"`
			Size                 int    `json:"size"`
			Magic                int    `json:"magic"`
			Compression          string `json:"compression"`
			CRC                  uint32 `json:"crc"`
			Valid                bool   `json:"valid"`
			Records              []struct {
				Offset    int64   `json:"offset"`
				Timestamp int64   `json:"timestamp"`
				KeySize   int     `json:"key_size"`
				ValueSize int     `json:"value_size"`
				Sequence  int32   `json:"sequence"`
				Key       *string `json:"key"`
				Value     *string `json:"value"`
				Headers   []struct {
					Key   string  `json:"key"`
					Value *string `json:"value"`
				} `json:"headers"`
				Control *struct {
					Type             string `json:"type"`
					TypeID           *int16 `json:"type_id"`
					CoordinatorEpoch *int32 `json:"coordinator_epoch"`
				} `json:"control"`
			} `json:"records"`
		} `json:"batches"`
		Entries []struct {
			Offset    int64  `json:"offset"`
			Position  *int64 `json:"position"`
			Timestamp *int64 `json:"timestamp"`
		} `json:"entries"`
		CheckedAgainst    string   `json:"checked_against"`
		NotCheckedAgainst string   `json:"not_checked_against"`
		Problems          []string `json:"problems"`
		Error             string   `json:"error"`
	} `json:"files"`
}

// TestDumpLogJSON dumps the test segment's three files as JSON and as text
// and checks that the JSON says, field for field, what the text lines say.
func TestDumpLogJSON(t *testing.T) {
	batches := dumpBatches()
	logPath := writeDumpSegment(t, batches)
	stem := strings.TrimSuffix(logPath, ".log")
	files := []string{logPath, stem + ".index", stem + ".timeindex"}
	text, err := dumpLog(t, append([]string{"--print-data-log", "--verify"}, files...)...)
	if err != nil {
		t.Fatalf("dump-log: %v\n%s", err, text)
	}
	out, err := dumpLog(t, append([]string{"--print-data-log", "--verify", "--format", "json"}, files...)...)
	if err != nil {
		t.Fatalf("dump-log --format json: %v\n%s", err, out)
	}
	var doc dumpJSONDoc
	decodeJSON(t, out, &doc)
	if len(doc.Files) != 3 {
		t.Fatalf("%d files, want 3:\n%s", len(doc.Files), out)
	}
	// The text form rebuilt from the JSON, line for line.
	var lines []string
	for i, f := range doc.Files {
		if f.Path != files[i] || f.Kind != []string{"log", "index", "timeindex"}[i] || len(f.Problems) != 0 || f.Error != "" {
			t.Errorf("file %d: path %q kind %q problems %q error %q", i, f.Path, f.Kind, f.Problems, f.Error)
		}
		lines = append(lines, "Dumping "+f.Path)
		if f.StartOffset != nil {
			lines = append(lines, fmt.Sprintf("Starting offset: %d", *f.StartOffset))
		}
		for _, b := range f.Batches {
			horizon := "OptionalLong.empty"
			if b.DeleteHorizonMs != nil {
				horizon = fmt.Sprintf("OptionalLong[%d]", *b.DeleteHorizonMs)
			}
			lines = append(lines, fmt.Sprintf("baseOffset: %d lastOffset: %d count: %d baseSequence: %d lastSequence: %d producerId: %d "+
				"producerEpoch: %d partitionLeaderEpoch: %d isTransactional: %t isControl: %t deleteHorizonMs: %s "+
				"position: %d %s: %d size: %d magic: %d compresscodec: %s crc: %d isvalid: %t",
				b.BaseOffset, b.LastOffset, b.Count, b.BaseSequence, b.LastSequence, b.ProducerID, b.ProducerEpoch,
				b.PartitionLeaderEpoch, b.Transactional, b.Control, horizon, b.Position, b.TimestampType, b.MaxTimestamp,
				b.Size, b.Magic, b.Compression, b.CRC, b.Valid))
			for _, r := range b.Records {
				var keys []string
				for _, h := range r.Headers {
					keys = append(keys, h.Key)
				}
				line := fmt.Sprintf("| offset: %d %s: %d keySize: %d valueSize: %d sequence: %d headerKeys: [%s]",
					r.Offset, b.TimestampType, r.Timestamp, r.KeySize, r.ValueSize, r.Sequence, strings.Join(keys, ","))
				if r.Control != nil {
					if r.Key != nil || r.Value != nil || r.Control.CoordinatorEpoch == nil {
						t.Errorf("control record %d: key %v value %v control %+v", r.Offset, r.Key, r.Value, r.Control)
						continue
					}
					line += fmt.Sprintf(" endTxnMarker: %s coordinatorEpoch: %d", r.Control.Type, *r.Control.CoordinatorEpoch)
				}
				if r.Key != nil {
					line += " key: " + *r.Key
				}
				if r.Value != nil {
					line += " payload: " + *r.Value
				}
				lines = append(lines, line)
			}
		}
		for _, e := range f.Entries {
			switch {
			case f.Kind == "index" && e.Position != nil:
				lines = append(lines, fmt.Sprintf("offset: %d position: %d", e.Offset, *e.Position))
			case f.Kind == "timeindex" && e.Timestamp != nil:
				lines = append(lines, fmt.Sprintf("timestamp: %d offset: %d", *e.Timestamp, e.Offset))
			default:
				t.Errorf("%s entry %+v", f.Kind, e)
			}
		}
		if f.Kind != "log" && f.CheckedAgainst != logPath {
			t.Errorf("%s checked against %q, want %q", f.Kind, f.CheckedAgainst, logPath)
		}
	}
	compareDumpLines(t, text, lines)

	// What the text form cannot show: header values, the base timestamp,
	// the control record's type id.
	log := doc.Files[0]
	if len(log.Batches) != len(batches) {
		t.Fatalf("%d batches, want %d", len(log.Batches), len(batches))
	}
	for i, b := range log.Batches {
		if b.BaseTimestamp != batches[i].opts.BaseTimestamp {
			t.Errorf("batch %d base timestamp %d, want %d", i, b.BaseTimestamp, batches[i].opts.BaseTimestamp)
		}
	}
	h := log.Batches[0].Records[1].Headers
	if len(h) != 2 || h[0].Key != "h1" || h[0].Value == nil || *h[0].Value != "v-h1" || *h[1].Value != "v-h2" {
		t.Errorf("headers of offset 1: %+v", h)
	}
	if c := log.Batches[7].Records[0].Control; c == nil || c.Type != "COMMIT" || c.TypeID == nil || *c.TypeID != 1 {
		t.Errorf("commit marker: %+v", c)
	}
	if r := log.Batches[1].Records[1]; r.Key == nil || *r.Key != "k" || r.Value != nil {
		t.Errorf("offset 3 (value null): key %v value %v", r.Key, r.Value)
	}
}

// TestDumpLogJSONProblems checks that corruption, a torn tail, an index
// without its log and a file that cannot be dumped are in the JSON, and
// that the document stays whole when --verify fails.
func TestDumpLogJSONProblems(t *testing.T) {
	batches := dumpBatches()
	logPath := writeDumpSegment(t, batches)
	bad := corruptDumpCopy(t, logPath, batches[1])

	torn := filepath.Join(copyDumpFiles(t, filepath.Dir(logPath), dumpSegmentNames...), dumpSegmentNames[0])
	if err := os.Truncate(torn, batches[5].pos+20); err != nil {
		t.Fatal(err)
	}
	alone := filepath.Join(copyDumpFiles(t, filepath.Dir(logPath), dumpSegmentNames[1]), dumpSegmentNames[1])
	other := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(other, []byte("hi"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := dumpLog(t, "--verify", "--format", "json", bad, torn, alone, other)
	if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), torn) || !strings.Contains(err.Error(), "unknown file type") {
		t.Errorf("--verify on bad files: %v", err)
	}
	var doc dumpJSONDoc
	decodeJSON(t, out, &doc)
	if len(doc.Files) != 4 {
		t.Fatalf("%d files, want 4:\n%s", len(doc.Files), out)
	}
	b, tr, al, ot := doc.Files[0], doc.Files[1], doc.Files[2], doc.Files[3]
	if len(b.Batches) != len(batches) || b.Batches[1].Valid || !b.Batches[0].Valid || len(b.Problems) == 0 ||
		!strings.Contains(b.Problems[0], fmt.Sprintf("batch at position %d", batches[1].pos)) {
		t.Errorf("flipped byte: %d batches, problems %q", len(b.Batches), b.Problems)
	}
	if tr.InvalidBytes == nil || *tr.InvalidBytes != 20 || len(tr.Batches) != 5 || len(tr.Problems) == 0 {
		t.Errorf("torn log: invalid bytes %v, %d batches, problems %q", tr.InvalidBytes, len(tr.Batches), tr.Problems)
	}
	if want := strings.TrimSuffix(alone, ".index") + ".log"; al.NotCheckedAgainst != want || al.CheckedAgainst != "" || len(al.Entries) == 0 {
		t.Errorf("index alone: not checked against %q, checked against %q, %d entries", al.NotCheckedAgainst, al.CheckedAgainst, len(al.Entries))
	}
	if ot.Path != other || ot.Kind != "" || !strings.Contains(ot.Error, "unknown file type") {
		t.Errorf("other file: %+v", ot)
	}

	if out, err := dumpLog(t, "--format", "json"); err == nil || out != "" {
		t.Errorf("no FILE with --format json: %v, %q", err, out)
	}
	if _, err := dumpLog(t, "--format", "jsno", logPath); err == nil || !strings.Contains(err.Error(), "did you mean json") {
		t.Errorf("--format jsno: %v", err)
	}
}

// TestDumpLogControlRecords checks each kind of control record's text (as
// Kafka's dump prints it) and JSON view.
func TestDumpLogControlRecords(t *testing.T) {
	for _, tc := range []struct {
		key, value []byte
		text, typ  string
		epoch      int32 // -1: none in the view
	}{
		{[]byte{0, 0, 0, 0}, []byte{0, 0, 0, 0, 0, 9}, " endTxnMarker: ABORT coordinatorEpoch: 9", "ABORT", 9},
		{[]byte{0, 0, 0, 1}, []byte{0, 0}, " endTxnMarker: COMMIT coordinatorEpoch: unknown (value of 2 bytes)", "COMMIT", -1},
		{[]byte{0, 0, 0, 2}, nil, " controlType: LEADER_CHANGE(2)", "LEADER_CHANGE", -1},
		{[]byte{0, 0, 0, 42}, nil, " controlType: UNKNOWN(42)", "UNKNOWN", -1},
		{[]byte{0, 0}, nil, " controlType: UNKNOWN(key of 2 bytes)", "UNKNOWN", -1},
	} {
		c := controlRecord(&kmsg.Record{Key: tc.key, Value: tc.value})
		if got := c.text(); got != tc.text {
			t.Errorf("key %v: text %q, want %q", tc.key, got, tc.text)
		}
		gotEpoch := int32(-1)
		if c.CoordinatorEpoch != nil {
			gotEpoch = *c.CoordinatorEpoch
		}
		if c.Type != tc.typ || gotEpoch != tc.epoch || (c.TypeID == nil) != (len(tc.key) < 4) {
			t.Errorf("key %v: view %+v", tc.key, c)
		}
	}
}
