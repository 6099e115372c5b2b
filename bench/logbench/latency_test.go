package logbench

import (
	"math"
	"testing"
	"time"
)

func TestHistogramBuckets(t *testing.T) {
	prev := -1
	for _, v := range []uint64{0, 1, 31, 32, 33, 47, 48, 63, 64, 1000, 999_999, 1 << 40, math.MaxInt64, math.MaxUint64} {
		i := bucketOf(v)
		if i < prev || i >= numBuckets {
			t.Fatalf("bucketOf(%d) = %d after %d (of %d)", v, i, prev, numBuckets)
		}
		prev = i
		hi := bucketHigh(i)
		if hi < v || (v >= 2*subBuckets && float64(hi-v) > float64(v)/subBuckets) {
			t.Errorf("value %d: bucket %d ends at %d", v, i, hi)
		}
		if i > 0 && bucketHigh(i-1) >= v {
			t.Errorf("value %d: the bucket before %d ends at %d", v, i, bucketHigh(i-1))
		}
	}
}

func TestHistogramQuantiles(t *testing.T) {
	var a, b histogram
	if a.quantile(0.5) != 0 {
		t.Errorf("empty histogram has a median")
	}
	for i := 1; i <= 99; i++ {
		a.add(time.Duration(i) * time.Millisecond)
	}
	b.add(time.Second)
	a.merge(&b)
	within := func(got, want time.Duration) bool {
		return got >= want && float64(got-want) <= float64(want)/subBuckets
	}
	if p50 := a.quantile(0.5); !within(p50, 50*time.Millisecond) {
		t.Errorf("p50 %v, want about 50ms", p50)
	}
	if p99 := a.quantile(0.99); !within(p99, 99*time.Millisecond) {
		t.Errorf("p99 %v, want about 99ms", p99)
	}
	if q, m := a.quantile(1), a.max; q != time.Second || m != time.Second {
		t.Errorf("p100 %v, max %v, want 1s", q, m)
	}
}
