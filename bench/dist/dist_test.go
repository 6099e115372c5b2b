package dist

import (
	"testing"
	"time"
)

func TestOfNearestRank(t *testing.T) {
	var d []time.Duration
	for i := 20; i >= 1; i-- {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	s := Of(d)
	if s.N != 20 || s.Min != time.Millisecond || s.Max != 20*time.Millisecond {
		t.Fatalf("summary %+v", s)
	}
	if s.Median != 10*time.Millisecond {
		t.Fatalf("median %v, want 10ms (nearest rank 10 of 20)", s.Median)
	}
	if s.P99 != 20*time.Millisecond {
		t.Fatalf("p99 %v, want the largest of 20", s.P99)
	}
	if d[0] != 20*time.Millisecond {
		t.Fatal("Of sorted its input in place")
	}
	if Of(nil).N != 0 {
		t.Fatal("empty sample")
	}
}
