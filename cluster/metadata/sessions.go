package metadata

// Sessions is the controller's in-memory record of broker liveness: the
// last heartbeat of every broker and memberlist's hints. It is no log fact
// (a new controller starts with none: Reset), and it decides only when to
// fence a broker (Expired, Controller.FenceExpired) and whether a live
// process holds a node id (RegisterBrokerRequest). Time comes in as NowMs
// on the caller's monotonic clock. A Sessions is not safe for concurrent
// use; the controller's actor owns it.
type Sessions struct {
	timeoutMs  int64
	intervalMs int64
	sessions   map[int32]session
	// failed holds memberlist's failure hints: node id to the time of the
	// first hint since the node was last seen alive.
	failed map[int32]int64
	// gone holds the evidence that a node's process is gone (its listener
	// refuses connections): node id to when it was found.
	gone map[int32]int64
}

// session is one broker's: the registration it heartbeats for and when
// it last did.
type session struct {
	epoch  int64
	lastMs int64
}

// BrokerRef names one registration of a broker.
type BrokerRef struct {
	NodeID int32
	Epoch  int64
}

// NewSessions returns Sessions that expire a broker after timeoutMs
// without a heartbeat (broker.session.timeout.ms), or at once when its
// process is known to be gone (ProcessGone) and no heartbeat came since.
// A failure hint of memberlist alone never shortens a session: a frozen or
// cut-off broker still holds its lease (it ends timeoutMs after the broker
// sent its last answered heartbeat, so before timeoutMs after the
// controller received it), and fencing it sooner would let a new leader
// acknowledge writes while it still does. heartbeatIntervalMs is
// broker.heartbeat.interval.ms.
func NewSessions(timeoutMs, heartbeatIntervalMs int64) *Sessions {
	return &Sessions{
		timeoutMs:  timeoutMs,
		intervalMs: heartbeatIntervalMs,
		sessions:   make(map[int32]session),
		failed:     make(map[int32]int64),
		gone:       make(map[int32]int64),
	}
}

// Heartbeat records a heartbeat of node's registration of epoch at nowMs.
// A heartbeat of an older epoch than the session's is ignored (epochs only
// grow); one of a newer epoch starts the new registration's session.
func (s *Sessions) Heartbeat(node int32, epoch int64, nowMs int64) {
	if cur, ok := s.sessions[node]; ok && epoch < cur.epoch {
		return
	}
	s.sessions[node] = session{epoch: epoch, lastMs: nowMs}
}

// Reset gives every registered unfenced broker of img a full session from
// nowMs and forgets every other session: called when this node becomes
// controller (it has no heartbeat history). Failure hints are kept, and
// so is the evidence that a process is gone (ProcessGone): such a broker
// expires at once.
func (s *Sessions) Reset(img *Image, nowMs int64) {
	clear(s.sessions)
	for _, br := range img.brokers.all() {
		if br.Fenced {
			continue
		}
		last := nowMs
		if at, gone := s.gone[br.NodeID]; gone {
			// Evidence gathered before this node led still holds: a
			// process that is gone holds no lease, whoever saw it go.
			last = at
		}
		s.sessions[br.NodeID] = session{epoch: br.Epoch, lastMs: last}
	}
	for node, at := range s.failed {
		s.failed[node] = max(at, nowMs)
	}
}

// MemberFailed is memberlist's hint that node failed, at nowMs: the
// controller then checks whether the process is gone (ProcessGone). The
// hint alone never fences. Repeated hints keep the first.
func (s *Sessions) MemberFailed(node int32, nowMs int64) {
	if _, ok := s.failed[node]; !ok {
		s.failed[node] = nowMs
	}
}

// ProcessGone records, at nowMs, evidence that node's process is gone: a
// connection to its listener was refused (the kernel resets connections
// to a port no process listens on; a frozen process's port still accepts,
// a cut-off one's does not answer), after memberlist's hint or after a
// connection to it closed. A gone process holds no lease, so the session
// expires at once unless a heartbeat arrives after the evidence.
func (s *Sessions) ProcessGone(node int32, nowMs int64) {
	s.gone[node] = nowMs
}

// MemberAlive is memberlist's hint that node is alive (it joined, or
// refuted a suspicion): it withdraws a failure hint and any evidence.
func (s *Sessions) MemberAlive(node int32) {
	delete(s.failed, node)
	delete(s.gone, node)
}

// Live reports whether node's registration of epoch holds a session at
// nowMs: it heartbeat for epoch (or got a session from Reset or Expired)
// and has not expired. A registration without a session is not live.
func (s *Sessions) Live(node int32, epoch int64, nowMs int64) bool {
	cur, ok := s.sessions[node]
	return ok && cur.epoch == epoch && !s.expired(node, cur, nowMs)
}

// expired reports whether cur, node's session, has expired at nowMs.
func (s *Sessions) expired(node int32, cur session, nowMs int64) bool {
	if nowMs-cur.lastMs >= s.timeoutMs {
		return true
	}
	at, gone := s.gone[node]
	return gone && at >= cur.lastMs
}

// Expired returns the registered unfenced brokers of img to fence now, by
// node id: no heartbeat for the session timeout, or its process is gone
// (ProcessGone) and no heartbeat arrived since. A registered unfenced broker without a session of
// its current epoch (unfenced before this controller heard from it) gets a
// full session from nowMs, as Reset gives, and is not expired now.
func (s *Sessions) Expired(img *Image, nowMs int64) []BrokerRef {
	var out []BrokerRef
	for _, br := range img.Brokers() {
		node := br.NodeID
		if br.Fenced {
			continue
		}
		cur, ok := s.sessions[node]
		if !ok || cur.epoch != br.Epoch {
			s.sessions[node] = session{epoch: br.Epoch, lastMs: nowMs}
			continue
		}
		if s.expired(node, cur, nowMs) {
			out = append(out, BrokerRef{NodeID: node, Epoch: br.Epoch})
		}
	}
	return out
}

// Extend moves every session's last heartbeat byMs later: the controller
// was not running for that long (a long batch, a paused process), so the
// heartbeats waiting in its mailbox are not the brokers' fault. Fencing
// later never breaks the lease (a broker's lease is its own: it ends
// without answers from the controller).
func (s *Sessions) Extend(byMs int64) {
	if byMs <= 0 {
		return
	}
	for node, cur := range s.sessions {
		cur.lastMs += byMs
		s.sessions[node] = cur
	}
}
