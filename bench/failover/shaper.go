package failover

import "time"

// retransmitDelay is the stall a lost TCP segment causes: Linux's
// minimum retransmission timeout. TCP never drops bytes, so the proxy
// models a loss as this delay before the chunk and, as the stream keeps
// its order, before everything after it in that direction.
const retransmitDelay = 200 * time.Millisecond

// impairment is what the proxy does to the chunks of one broker's client
// connections, each direction alike.
type impairment struct {
	// Latency is the one-way delay added to every chunk.
	Latency time.Duration
	// Loss is the probability that a chunk is "lost" (see
	// retransmitDelay), 0 to 1.
	Loss float64
}

// plus combines two impairments: latencies add, losses are independent.
func (a impairment) plus(b impairment) impairment {
	return impairment{Latency: a.Latency + b.Latency, Loss: 1 - (1-a.Loss)*(1-b.Loss)}
}

// none reports whether the impairment changes nothing.
func (a impairment) none() bool { return a.Latency <= 0 && a.Loss <= 0 }

// shaper decides when each chunk of one direction of a connection is
// forwarded: at its arrival plus the latency, never before the previous
// chunk (the stream keeps its order), plus retransmitDelay when lost.
// Chunks that arrive close together are delayed together, so the added
// latency does not limit the throughput. It does no I/O and reads no
// clock.
type shaper struct {
	last time.Time // when the previous chunk is forwarded
}

// due returns when the chunk that arrived at arrival is forwarded.
func (s *shaper) due(arrival time.Time, imp impairment, lost bool) time.Time {
	d := arrival.Add(max(imp.Latency, 0))
	if d.Before(s.last) {
		d = s.last
	}
	if lost {
		d = d.Add(retransmitDelay)
	}
	s.last = d
	return d
}
