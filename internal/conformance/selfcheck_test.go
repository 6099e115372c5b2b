package conformance

import (
	"encoding/binary"
	"hash/crc32"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The tests in this file check the suite's own checks, without a broker:
// each corrupts a correct run in one way and expects exactly that caught.

// checkFixture returns six produced records over two partitions and their
// correct consumption.
func checkFixture() (want, got []record) {
	d := driver{}
	want = makeRecords(6, d)
	next := map[int32]int64{}
	for i := range want {
		p := int32(i % 2)
		want[i].Partition, want[i].Offset = p, next[p]
		next[p]++
	}
	for _, p := range []int32{0, 1} { // consumed partition by partition
		for _, w := range want {
			if w.Partition == p {
				g := w
				g.TimestampType = 0
				got = append(got, g)
			}
		}
	}
	return want, got
}

func TestCheckRecords(t *testing.T) {
	opts := checkOptions{partitions: 2, tsLo: -1, tsHi: -1}
	tests := []struct {
		name    string
		corrupt func(want, got []record) ([]record, []record)
		opts    func(o *checkOptions)
		expect  string // "" for no problem
	}{
		{name: "correct", corrupt: func(w, g []record) ([]record, []record) { return w, g }},
		{name: "missing", expect: "not consumed",
			corrupt: func(w, g []record) ([]record, []record) { return w, g[:len(g)-1] }},
		{name: "duplicate", expect: "consumed twice",
			corrupt: func(w, g []record) ([]record, []record) {
				d := g[0]
				d.Offset = 3
				return w, slices.Insert(g, 3, d)
			}},
		{name: "offset gap", expect: "offset out of sequence",
			corrupt: func(w, g []record) ([]record, []record) { g[1].Offset = 5; return w, g }},
		{name: "produce order", expect: "produce order not kept",
			corrupt: func(w, g []record) ([]record, []record) {
				g[0].Key, g[1].Key = g[1].Key, g[0].Key
				g[0].Value, g[1].Value = g[1].Value, g[0].Value
				g[0].Headers, g[1].Headers = g[1].Headers, g[0].Headers
				g[0].Timestamp, g[1].Timestamp = g[1].Timestamp, g[0].Timestamp
				// The producer did not report locations here.
				for i := range w {
					w[i].Partition, w[i].Offset = -1, -1
				}
				return w, g
			}},
		{name: "acks=0 order not checked",
			opts: func(o *checkOptions) { o.unordered = true },
			corrupt: func(w, g []record) ([]record, []record) {
				g[0].Key, g[1].Key = g[1].Key, g[0].Key
				g[0].Value, g[1].Value = g[1].Value, g[0].Value
				g[0].Headers, g[1].Headers = g[1].Headers, g[0].Headers
				g[0].Timestamp, g[1].Timestamp = g[1].Timestamp, g[0].Timestamp
				for i := range w {
					w[i].Partition, w[i].Offset = -1, -1
				}
				return w, g
			}},
		{name: "acknowledged elsewhere", expect: "was acknowledged at partition 1 offset 0",
			corrupt: func(w, g []record) ([]record, []record) { w[0].Partition = 1; return w, g }},
		{name: "value", expect: "value",
			corrupt: func(w, g []record) ([]record, []record) { g[2].Value = []byte("x"); return w, g }},
		{name: "header", expect: "headers",
			corrupt: func(w, g []record) ([]record, []record) { g[2].Headers = g[2].Headers[:1]; return w, g }},
		{name: "timestamp", expect: "timestamp",
			corrupt: func(w, g []record) ([]record, []record) { g[2].Timestamp++; return w, g }},
		{name: "timestamp type", expect: "timestamp type 1",
			corrupt: func(w, g []record) ([]record, []record) { g[2].TimestampType = 1; return w, g }},
		{name: "client timestamp outside the window", expect: "want one set while producing",
			opts: func(o *checkOptions) { o.tsLo, o.tsHi = 100, 200 },
			corrupt: func(w, g []record) ([]record, []record) {
				for i := range w {
					w[i].Timestamp = -1
				}
				for i := range g {
					g[i].Timestamp = 150
				}
				g[3].Timestamp = 201
				return w, g
			}},
		{name: "partition out of range", expect: "partition out of range",
			corrupt: func(w, g []record) ([]record, []record) { g[5].Partition = 2; return w, g }},
		{name: "unknown key", expect: "unknown key",
			corrupt: func(w, g []record) ([]record, []record) { g[0].Key = []byte("nope"); return w, g }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want, got := tc.corrupt(checkFixture())
			o := opts
			if tc.opts != nil {
				tc.opts(&o)
			}
			p := checkRecords(want, got, o)
			switch {
			case tc.expect == "" && p.count != 0:
				t.Fatalf("problems in a correct run: %q", p.lines)
			case tc.expect != "" && !slices.ContainsFunc(p.lines, func(l string) bool { return strings.Contains(l, tc.expect) }):
				t.Fatalf("want a problem mentioning %q, got %q", tc.expect, p.lines)
			}
		})
	}
}

// encodeBatch encodes a record batch of n records with codec, its CRC set.
func encodeBatch(first int64, n int32, codec int8) []byte {
	rb := kmsg.RecordBatch{
		FirstOffset:     first,
		Magic:           2,
		Attributes:      int16(codec),
		LastOffsetDelta: n - 1,
		NumRecords:      n,
		ProducerID:      -1,
		ProducerEpoch:   -1,
		FirstSequence:   -1,
		Records:         []byte("opaque records"),
	}
	b := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(b[8:12], uint32(len(b)-batchLengthEnd))
	crc := crc32.Checksum(b[attributesAt:], castagnoli)
	binary.BigEndian.PutUint32(b[magicAt+1:attributesAt], crc)
	return b
}

func TestParseAndCheckBatches(t *testing.T) {
	raw := append(encodeBatch(0, 3, codecIDs["lz4"]), encodeBatch(3, 2, 0)...)
	raw = append(raw, encodeBatch(5, 1, codecIDs["lz4"])[:30]...) // truncated: ignored
	bs, next, err := parseBatches(0, raw)
	if err != nil || next != 5 || len(bs) != 2 {
		t.Fatalf("parseBatches: %d batches, next %d, err %v; want 2, 5, nil", len(bs), next, err)
	}
	if p := checkBatches(bs, "lz4", 1); p.count != 0 {
		t.Fatalf("problems in correct batches: %q", p.lines)
	}
	if p := checkBatches(bs, "gzip", 1); p.count == 0 {
		t.Fatal("lz4 batches passed as gzip")
	}
	if p := checkBatches(bs[1:], "lz4", 1); p.count == 0 {
		t.Fatal("a partition without a compressed batch passed")
	}
	corrupt := slices.Clone(raw)
	corrupt[len(corrupt)-31] ^= 1 // inside the second batch's records
	bs, _, err = parseBatches(0, corrupt)
	if err != nil {
		t.Fatal(err)
	}
	if p := checkBatches(bs, "", 1); p.count != 1 || !strings.Contains(p.lines[0], "CRC") {
		t.Fatalf("corrupt batch: problems %q, want one about the CRC", p.lines)
	}
	old := encodeBatch(0, 1, 0)
	old[magicAt] = 1
	if _, _, err := parseBatches(0, old); err == nil {
		t.Fatal("a magic 1 batch parsed without error")
	}
}

func TestParseKcat(t *testing.T) {
	out := "1\t7\t1700000000000\t5\t3\tkey-1\tv\tx\torigin=weir,client=kcat\n" +
		"1\t8\t1700000000001\t-1\t0\t\t\t\n"
	rs, err := parseKcat([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 {
		t.Fatalf("%d records, want 2", len(rs))
	}
	r := rs[0]
	if r.Partition != 1 || r.Offset != 7 || r.Timestamp != 1700000000000 || string(r.Key) != "key-1" ||
		string(r.Value) != "v\tx" || formatHeaders(r.Headers) != `["origin"="weir" "client"="kcat"]` {
		t.Fatalf("first record %+v", r)
	}
	if rs[1].Key != nil || len(rs[1].Value) != 0 || rs[1].Headers != nil {
		t.Fatalf("second record %+v, want a null key, an empty value and no headers", rs[1])
	}
	if _, err := parseKcat([]byte("1\t7\t0\t9\t0\tshort\t\t\n")); err == nil {
		t.Fatal("a key shorter than its length parsed")
	}
}
