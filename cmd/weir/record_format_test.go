package main

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// testRecord is a record as a consumer sees it.
func testRecord() *kgo.Record {
	return &kgo.Record{
		Topic: "orders", Partition: 2, Offset: 41,
		Key: []byte("k1"), Value: []byte("v \"1\"\n<b>"),
		Headers:   []kgo.RecordHeader{{Key: "a", Value: []byte("1")}, {Key: "b", Value: nil}},
		Timestamp: time.UnixMilli(1700000000123),
	}
}

func TestRecordPrinter(t *testing.T) {
	cases := []struct {
		format string
		rec    *kgo.Record
		want   string
	}{
		{"text", testRecord(), "v \"1\"\n<b>\n"},
		{`%k %v\n`, testRecord(), "k1 v \"1\"\n<b>\n"},
		{`%t/%p@%o %d %H %h{%k=%v;}\t%K %V\n`, testRecord(), "orders/2@41 1700000000123 2 a=1;b=;\t2 9\n"},
		{`%v{base64}\n`, testRecord(), "diAiMSIKPGI+\n"},
		{`%k{hex}`, testRecord(), "6b31"},
		{"json", testRecord(), `{"topic":"orders","key":"k1","value":"v \"1\"\n<b>","headers":[{"key":"a","value":"1"},{"key":"b","value":null}],` +
			`"timestamp":1700000000123,"partition":2,"offset":41}` + "\n"},
		{"json", &kgo.Record{Topic: "t", Value: []byte{}, Timestamp: time.UnixMilli(5)},
			`{"topic":"t","key":null,"value":"","headers":[],"timestamp":5,"partition":0,"offset":0}` + "\n"},
		{"json", &kgo.Record{Topic: "t", Key: []byte{0xff, 'x'}, Timestamp: time.UnixMilli(5)},
			`{"topic":"t","key":"\ufffdx","value":null,"headers":[],"timestamp":5,"partition":0,"offset":0}` + "\n"},
	}
	for _, c := range cases {
		p, err := newRecordPrinter(c.format)
		if err != nil {
			t.Fatalf("%q: %v", c.format, err)
		}
		if got := string(p.appendRecord([]byte("prefix:"), nil, c.rec)); got != "prefix:"+c.want {
			t.Errorf("%q printed\n%q, want\n%q", c.format, got, "prefix:"+c.want)
		}
	}
	// The partition verbs need the fetch's partition.
	p, err := newRecordPrinter(`%[ %] %|\n`)
	if err != nil {
		t.Fatal(err)
	}
	fp := &kgo.FetchPartition{LogStartOffset: 3, HighWatermark: 50, LastStableOffset: 49}
	if got := string(p.appendRecord(nil, fp, testRecord())); got != "3 50 49\n" {
		t.Errorf("partition verbs printed %q", got)
	}
	for _, bad := range []string{"", "%v{nosuch}", "%h", "%d{nosuch}"} {
		if _, err := newRecordPrinter(bad); err == nil {
			t.Errorf("format %q accepted", bad)
		}
	}
}

// readAll reads every record of input in format, after setup sets the
// fixed parts, and returns them and the error that ended the input (nil
// for io.EOF).
func readAll(t *testing.T, input io.Reader, format string, setup func(*recordInput)) ([]*kgo.Record, error) {
	t.Helper()
	in, err := newRecordInput(input, format)
	if err != nil {
		t.Fatalf("format %q: %v", format, err)
	}
	if setup != nil {
		setup(in)
	}
	var recs []*kgo.Record
	for {
		r, err := in.next()
		if errors.Is(err, io.EOF) {
			return recs, nil
		}
		if err != nil {
			return recs, err
		}
		recs = append(recs, r)
	}
}

// recordLine is a record's key, value and headers, nil shown as <nil>.
func recordLine(r *kgo.Record) string {
	show := func(b []byte) string {
		if b == nil {
			return "<nil>"
		}
		return string(b)
	}
	s := show(r.Key) + "|" + show(r.Value)
	for _, h := range r.Headers {
		s += "|" + h.Key + "=" + show(h.Value)
	}
	return s
}

func TestRecordInput(t *testing.T) {
	fixed := func(key string, headers ...kgo.RecordHeader) func(*recordInput) {
		return func(in *recordInput) {
			in.key, in.headers = []byte(key), headers
		}
	}
	cases := []struct {
		name, format, input string
		setup               func(*recordInput)
		want                []string
	}{
		{"lines", defaultProduceFormat, "a\nb c\n", nil, []string{"<nil>|a", "<nil>|b c"}},
		{"last line without newline", defaultProduceFormat, "a\nb", nil, []string{"<nil>|a", "<nil>|b"}},
		{"empty lines are empty values", defaultProduceFormat, "\n\nx\n", nil, []string{"<nil>|", "<nil>|", "<nil>|x"}},
		{"empty input", defaultProduceFormat, "", nil, nil},
		{"key and value", `%k %v\n`, "k1 v 1\nk2 v2", nil, []string{"k1|v 1", "k2|v2"}},
		{"fixed key", defaultProduceFormat, "v\n", fixed("K"), []string{"K|v"}},
		{"read key wins", `%k %v\n`, "k v\n", fixed("K"), []string{"k|v"}},
		{"fixed headers first", `%v %H %h{%k=%v;}\n`, "v 1 x=1;\n", fixed("", kgo.RecordHeader{Key: "a", Value: []byte("A")}, kgo.RecordHeader{Key: "a", Value: []byte("B")}),
			[]string{"|v|a=A|a=B|x=1"}},
		{"sized headers", `%H %h{%K %k%V %v}%v\n`, "2 1 a1 x2 bb2 yyv\n", nil, []string{"<nil>|v|a=x|bb=yy"}},
		{"hex value with a newline", `%v{hex}\n`, "610a62\n", nil, []string{"<nil>|a\nb"}},
		{"base64 key", `%k{base64} %v\n`, "YQo= v\n", nil, []string{"a\n|v"}},
		{"no trailing newline in the format", `%K{big8}%k%V{big8}%v`, "\x01a\x02bc\x00\x00", nil, []string{"a|bc", "<nil>|"}},
	}
	for _, c := range cases {
		recs, err := readAll(t, strings.NewReader(c.input), c.format, c.setup)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		var got []string
		for _, r := range recs {
			got = append(got, recordLine(r))
		}
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s: read\n%q, want\n%q", c.name, got, c.want)
		}
	}
}

func TestRecordInputOneByteReads(t *testing.T) {
	recs, err := readAll(t, iotest.OneByteReader(strings.NewReader("k1 v1\nk2 v2")), `%k %v\n`, nil)
	if err != nil || len(recs) != 2 || recordLine(recs[1]) != "k2|v2" {
		t.Fatalf("read %d records, %v", len(recs), err)
	}
}

func TestRecordInputTombstone(t *testing.T) {
	recs, err := readAll(t, strings.NewReader("\nx\n"), defaultProduceFormat, func(in *recordInput) { in.tombstone = true })
	if err != nil || len(recs) != 2 || recs[0].Value != nil || string(recs[1].Value) != "x" {
		t.Fatalf("read %v, %v", recs, err)
	}
}

func TestRecordInputMismatchNamesTheRecord(t *testing.T) {
	recs, err := readAll(t, strings.NewReader("k1 v1\nnospace\n"), `%k %v\n`, nil)
	if len(recs) != 1 || err == nil || !strings.Contains(err.Error(), "input record 2 does not match the format") {
		t.Fatalf("read %d records, error %v", len(recs), err)
	}
}

func TestRecordInputRejectsBadFormats(t *testing.T) {
	for _, f := range []string{"", "%q", "%v{nosuch}"} {
		if _, err := newRecordInput(strings.NewReader(""), f); err == nil {
			t.Errorf("format %q accepted", f)
		}
	}
}

func TestHeaderFlag(t *testing.T) {
	var h headerFlag
	for _, v := range []string{"a=1", "b:2", "url=http://x:1/", "t:12=30", "empty=", "a=again"} {
		if err := h.Set(v); err != nil {
			t.Fatalf("Set(%q): %v", v, err)
		}
	}
	if got, want := h.String(), "a=1 b=2 url=http://x:1/ t=12=30 empty= a=again"; got != want {
		t.Errorf("headers %q, want %q", got, want)
	}
	for _, bad := range []string{"novalue", "=v", ":v"} {
		if err := h.Set(bad); err == nil {
			t.Errorf("Set(%q) accepted", bad)
		}
	}
}

func TestFormatScans(t *testing.T) {
	verbs := []struct {
		format string
		verb   byte
		want   bool
	}{
		{"%p %v", 'p', true}, {"%%p %v", 'p', false}, {"%%%p", 'p', true}, {"%v", 'p', false}, {"%t", 't', true}, {"%", 't', false},
	}
	for _, c := range verbs {
		if got := hasVerb(c.format, c.verb); got != c.want {
			t.Errorf("hasVerb(%q, %c) = %v", c.format, c.verb, got)
		}
	}
	newlines := map[string]bool{`%v\n`: true, "%v\n": true, `%v\\n`: false, `%v\\\n`: true, `%v`: false, `n`: false, `%v\t`: false}
	for f, want := range newlines {
		if got := endsInNewline(f); got != want {
			t.Errorf("endsInNewline(%q) = %v", f, got)
		}
	}
}
