package batch

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// codecs lists every codec with its name, for test matrices.
var codecs = []struct {
	name  string
	codec int16
}{
	{"none", CodecNone},
	{"gzip", CodecGzip},
	{"snappy", CodecSnappy},
	{"lz4", CodecLz4},
	{"zstd", CodecZstd},
}

// testRecords returns n records with gapped offset deltas (0, 2, 4, ...),
// timestamp deltas that go back and forth, and a mix of nil, empty and set
// keys, values and headers.
func testRecords(n int) []kmsg.Record {
	rs := make([]kmsg.Record, n)
	for i := range rs {
		r := &rs[i]
		r.OffsetDelta = int32(2 * i)
		r.TimestampDelta64 = int64((i%3 - 1) * 1000 * i)
		switch i % 4 {
		case 0:
			r.Key = nil
		case 1:
			r.Key = []byte{}
		default:
			r.Key = fmt.Appendf(nil, "key-%d", i)
		}
		if i%5 != 4 {
			r.Value = bytes.Repeat(fmt.Appendf(nil, "value %d ", i), 1+i%7)
		}
		for h := range i % 3 {
			r.Headers = append(r.Headers, kmsg.Header{Key: fmt.Sprintf("h%d", h), Value: fmt.Appendf(nil, "v%d", h)})
		}
		if i%6 == 5 {
			r.Headers = append(r.Headers, kmsg.Header{Key: "", Value: nil})
		}
	}
	return rs
}

// mustBuild is Build that fails the test on error.
func mustBuild(t testing.TB, opts Options, records []kmsg.Record) []byte {
	t.Helper()
	b, err := Build(opts, records)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return b
}

// wantErr fails the test unless err wraps target.
func wantErr(t testing.TB, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error %v, want one wrapping %v", err, target)
	}
}

// sameRecord reports how got differs from want in what a batch carries.
func sameRecord(got, want *kmsg.Record) error {
	switch {
	case got.OffsetDelta != want.OffsetDelta:
		return fmt.Errorf("offset delta %d, want %d", got.OffsetDelta, want.OffsetDelta)
	case got.TimestampDelta64 != want.TimestampDelta64:
		return fmt.Errorf("timestamp delta %d, want %d", got.TimestampDelta64, want.TimestampDelta64)
	case !sameBytes(got.Key, want.Key):
		return fmt.Errorf("key %q, want %q", got.Key, want.Key)
	case !sameBytes(got.Value, want.Value):
		return fmt.Errorf("value %q, want %q", got.Value, want.Value)
	case len(got.Headers) != len(want.Headers):
		return fmt.Errorf("%d headers, want %d", len(got.Headers), len(want.Headers))
	}
	for i, h := range got.Headers {
		if w := want.Headers[i]; h.Key != w.Key || !sameBytes(h.Value, w.Value) {
			return fmt.Errorf("header %d %q=%q, want %q=%q", i, h.Key, h.Value, w.Key, w.Value)
		}
	}
	return nil
}

// sameBytes is bytes.Equal that also tells nil from empty.
func sameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }
