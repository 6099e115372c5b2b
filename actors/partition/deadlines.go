package partition

// NextTickMs is the earliest time (on the replica's clock, in ms) at which
// a Tick may change something, for a replica without waiters (HasWaiters
// is false; with waiters the node ticks it at its fast rate): the next
// producer expiry check, and on a leader the moment an ISR member that has
// not reached the log end would have lagged for replica.lag.time.max.ms.
// A replica that has not seen a clock reading yet, or a leader whose
// followers' caught-up clocks have not started, is due at once (1). The
// node's ticker skips a replica until then, so an idle partition costs no
// message.
func (r *Replica) NextTickMs() int64 {
	if r.nowMs <= 0 {
		return 1
	}
	next := r.lastExpiryMs + r.cfg.ProducerIDExpirationCheckIntervalMs
	if r.role != Leader {
		return next
	}
	if r.proposal != nil {
		return 1 // HasWaiters: ticked at the fast rate anyway
	}
	leaderEnd := r.localEnd()
	for _, id := range r.isr {
		f := r.followers[id]
		if id == r.cfg.NodeID || f == nil || (f.known && f.end >= leaderEnd) {
			continue
		}
		if f.caughtUpMs < 0 {
			return 1
		}
		next = min(next, f.caughtUpMs+r.cfg.ReplicaLagTimeMaxMs+1)
	}
	return max(next, 1)
}
