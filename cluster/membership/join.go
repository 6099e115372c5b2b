package membership

import "time"

// joinLoop joins the seeds whenever this node knows no other live member:
// at start (the seeds may not be up yet) and again when all others are
// gone. A failed attempt is retried after a backoff that doubles from
// joinBackoffMin to joinBackoffMax; it ends at Leave (it no longer joins)
// or Stop.
func (m *Members) joinLoop() {
	defer m.wg.Done()
	backoff := joinBackoffMin
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	for {
		if m.shouldJoin() {
			n, err := m.ml.Join(m.seeds)
			if members := m.ml.NumMembers(); members > 1 {
				m.log.Info("membership: joined", "seeds_reached", n, "members", members)
				backoff = joinBackoffMin
				continue
			}
			m.log.Debug("membership: join failed; retrying", "seeds", m.seeds, "backoff", backoff, "error", err)
			timer.Reset(backoff)
			select {
			case <-m.stopCh:
				return
			case <-timer.C:
			}
			backoff = min(2*backoff, joinBackoffMax)
			continue
		}
		backoff = joinBackoffMin
		select {
		case <-m.stopCh:
			return
		case <-m.kick:
		}
	}
}

// shouldJoin: neither stopped nor leaving, and no other member alive.
func (m *Members) shouldJoin() bool {
	m.mu.Lock()
	quit := m.stopped || m.leaving
	m.mu.Unlock()
	return !quit && m.ml.NumMembers() <= 1
}
