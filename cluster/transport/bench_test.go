package transport

import "testing"

// BenchmarkRoundTrip times one small request and its reply between two
// actor systems over loopback, one at a time.
func BenchmarkRoundTrip(b *testing.B) {
	x := startNode(b, "127.0.0.1:0", nil)
	y := startNode(b, "127.0.0.1:0", nil)
	to := x.tr.PID(y.tr.Address(), "sink")
	roundTrip := func(seq int64) {
		if err := x.tr.Send(to, &ping{Seq: seq, From: "x"}, x.sink); err != nil {
			b.Fatal(err)
		}
		x.next(b, is[*pong])
	}
	roundTrip(-1) // connect both ways
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		roundTrip(int64(i))
	}
}
