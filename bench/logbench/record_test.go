package logbench_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/weirmq/weir/bench/logbench"
)

func TestKeyRoundTrip(t *testing.T) {
	for _, k := range []logbench.Key{
		{},
		{Run: 7, Partition: 15, Writer: 63, Seq: 123456, Index: 255},
		{Run: 1<<63 - 1, Partition: 1<<31 - 1, Writer: 1<<31 - 1, Seq: 1<<63 - 1, Index: 1<<31 - 1},
	} {
		got, err := logbench.ParseKey(k.AppendTo(nil))
		if err != nil || got != k {
			t.Errorf("ParseKey(%q) = %+v, %v; want %+v", k.String(), got, err, k)
		}
	}
	if got := (logbench.Key{Run: 1, Partition: 2, Writer: 3, Seq: 4, Index: 5}).String(); got != "r1.p2.w3.s4.i5" {
		t.Errorf("key text %q, want r1.p2.w3.s4.i5", got)
	}
}

func TestParseKeyRejects(t *testing.T) {
	for _, key := range []string{
		"", "r1.p2.w3.s4", "r1.p2.w3.s4.i5.x6", "p1.r2.w3.s4.i5", "r1.p2.w3.s4.i", "r01.p2.w3.s4.i5",
		"r+1.p2.w3.s4.i5", "r-1.p2.w3.s4.i5", "r1.p2147483648.w3.s4.i5", "r1.p2.w3.s4.i5 ", "k17",
	} {
		if k, err := logbench.ParseKey([]byte(key)); !errors.Is(err, logbench.ErrBadRecord) {
			t.Errorf("ParseKey(%q) = %+v, %v; want ErrBadRecord", key, k, err)
		}
	}
}

func TestVerifyRecord(t *testing.T) {
	k := logbench.Key{Run: 3, Partition: 1, Writer: 9, Seq: 77, Index: 4}
	key := k.AppendTo(nil)
	for _, size := range []int{0, 1, 7, 8, 9, 1024, 1031} {
		value := logbench.AppendValue(nil, key, size)
		if len(value) != size {
			t.Fatalf("AppendValue of %d bytes returned %d", size, len(value))
		}
		got, err := logbench.VerifyRecord(key, value)
		if err != nil || got != k {
			t.Errorf("VerifyRecord of a %d-byte value = %+v, %v; want %+v", size, got, err, k)
		}
		for i := range value {
			bad := append([]byte(nil), value...)
			bad[i] ^= 0x10
			if _, err := logbench.VerifyRecord(key, bad); !errors.Is(err, logbench.ErrBadRecord) {
				t.Fatalf("VerifyRecord accepted a %d-byte value with byte %d flipped: %v", size, i, err)
			}
		}
	}
	other := logbench.Key{Run: 3, Partition: 1, Writer: 9, Seq: 78, Index: 4}.AppendTo(nil)
	if _, err := logbench.VerifyRecord(other, logbench.AppendValue(nil, key, 64)); !errors.Is(err, logbench.ErrBadRecord) {
		t.Errorf("VerifyRecord accepted another record's value: %v", err)
	}
}

// TestValueIsStable pins the value derivation: logs written by one build of
// weir must verify under every later one.
func TestValueIsStable(t *testing.T) {
	key := logbench.Key{Run: 1, Partition: 2, Writer: 3, Seq: 4, Index: 5}.AppendTo(nil)
	const want = "cedb1928893e8648368cd154a8c2b83ed24f60af"
	if got := fmt.Sprintf("%x", logbench.AppendValue(nil, key, 20)); got != want {
		t.Errorf("value of %s = %s, want %s", key, got, want)
	}
}
