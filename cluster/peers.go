package cluster

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"syscall"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/weirmq/weir/cluster/membership"
	"github.com/weirmq/weir/cluster/quorum"
	pb "go.etcd.io/raft/v3/raftpb"
)

// peerBook maps node ids to the live processes gossip knows for them,
// in the order they joined. It is a hint for routing messages: the
// metadata image's registrations are the fallback, and nothing decided
// about the cluster depends on it. A node id's messages go to its first
// live process: a second process claiming the id (a duplicate, or a
// restart seen before its predecessor's failure) gets none until the first
// is gone, so two processes never both answer as one raft voter.
type peerBook map[int32][]peer

// peer is one node's live process as gossip knows it.
type peer struct {
	name       string // the memberlist name (one per process)
	remoteAddr string
	voter      bool // it gossips that it is a voter (learners.go)
}

// active returns the process node id's messages go to.
func (b peerBook) active(id int32) (peer, bool) {
	if ps := b[id]; len(ps) > 0 {
		return ps[0], true
	}
	return peer{}, false
}

// alive records a live process of id (again: its address may change).
func (b peerBook) alive(id int32, p peer) {
	for i, q := range b[id] {
		if q.name == p.name {
			b[id][i] = p
			return
		}
	}
	b[id] = append(b[id], p)
}

// gone forgets a process; it reports whether it was the active one.
func (b peerBook) gone(id int32, name string) bool {
	ps := b[id]
	for i, q := range ps {
		if q.name == name {
			b[id] = append(ps[:i:i], ps[i+1:]...)
			if len(b[id]) == 0 {
				delete(b, id)
			}
			return i == 0
		}
	}
	return false
}

// usedByOther reports whether a live process other than name has addr (a
// node restarted on the same port).
func (b peerBook) usedByOther(addr, name string) bool {
	for _, ps := range b {
		for _, p := range ps {
			if p.remoteAddr == addr && p.name != name {
				return true
			}
		}
	}
	return false
}

// metadataActorName is the name of node id's metadata actor in its actor
// system, which other nodes address it by.
func metadataActorName(id int32) string { return fmt.Sprintf("weir-metadata-%d", id) }

// peerPID returns the PID of node's metadata actor, or nil when its
// address is unknown.
func (a *metadataActor) peerPID(node int32) *actor.PID {
	if a.remote == nil {
		return nil
	}
	if node == a.n.id {
		return a.self
	}
	p, _ := a.peers.active(node)
	addr := p.remoteAddr
	if addr == "" {
		if br, ok := a.applied.Broker(node); ok {
			addr = br.ActorAddress
		}
	}
	if addr == "" {
		return nil
	}
	return a.remote.PID(addr, metadataActorName(node))
}

// sendRaft sends raft's messages to the other voters and learners; one
// that cannot be sent is reported unreachable, so raft probes again
// rather than waiting.
func (a *metadataActor) sendRaft(msgs []*pb.Message) {
	for _, m := range msgs {
		to := quorum.NodeIDOf(m.GetTo())
		pid := a.peerPID(to)
		err := fmt.Errorf("no address for node %d", to)
		if pid != nil {
			var data []byte
			if data, err = proto.Marshal(m); err == nil {
				err = a.remote.Send(pid, &raftMessage{Data: data}, a.self)
			}
		}
		if err != nil {
			a.q.ReportUnreachable(to)
		}
		if m.GetType() == pb.MessageType_MsgSnap {
			// Delivery is at most once: a lost snapshot is noticed by
			// raft's probing and sent again.
			a.q.ReportSnapshot(to, err == nil)
		}
	}
}

// onRaft steps a raft message from another node.
func (a *metadataActor) onRaft(m *raftMessage) {
	if a.failed != nil {
		return
	}
	msg := &pb.Message{}
	if err := proto.Unmarshal(m.Data, msg); err != nil {
		a.log.Warn("undecodable raft message dropped", "err", err)
		return
	}
	if err := a.q.Step(msg); err != nil {
		a.log.Debug("raft message not stepped", "type", msg.GetType().String(), "from", quorum.NodeIDOf(msg.GetFrom()), "err", err)
		return
	}
	a.handleReady()
}

// onMember takes a gossip event: the address book follows it, the
// transport stops sending to a node declared dead, and the controller's
// sessions get the hint.
func (a *metadataActor) onMember(e membership.Event) {
	id, addr := e.Member.Meta.NodeID, e.Member.Meta.RemoteAddr
	switch e.Kind {
	case membership.Joined, membership.Updated:
		if e.Member.State != membership.Alive && e.Member.State != membership.Suspect {
			return
		}
		if e.Kind == membership.Joined && e.Member.Meta.Voter != slices.Contains(a.n.voters, id) {
			// The nodes were started with different --voters: raft keeps
			// to this node's list, and the quorum may never form.
			a.log.Warn("a gossip member disagrees on the voters: every node needs the same controller.quorum.voters",
				"node", id, "member", e.Member.Name, "it_says_voter", e.Member.Meta.Voter, "voters_here", a.n.voters)
		}
		a.peers.alive(id, peer{name: e.Member.Name, remoteAddr: addr, voter: e.Member.Meta.Voter})
		if a.remote != nil && addr != "" {
			a.remote.SetDown(addr, false)
		}
		if s := a.controller.Sessions; s != nil {
			s.MemberAlive(id)
		}
	case membership.Failed, membership.Departed:
		if a.remote != nil && addr != "" && !a.peers.usedByOther(addr, e.Member.Name) {
			a.remote.SetDown(addr, true)
		}
		if !a.peers.gone(id, e.Member.Name) {
			return // not the process the node id's messages went to
		}
		if s := a.controller.Sessions; s != nil {
			s.MemberFailed(id, a.nowMs())
		}
		a.probeGone(id)
		a.leaderGone(id)
	}
}

// leaderGone takes gossip's word that the quorum leader's process failed
// or left as a hint to raft (quorum.Node.LeaderGone): the voters forget it
// and the first surviving voter in id order campaigns at once, so a new
// controller is elected a few round trips after gossip's verdict rather
// than after raft's election timeout. The hint moves no fact: a wrong one
// costs an election.
func (a *metadataActor) leaderGone(id int32) {
	if a.q.Leader() != id || !slices.Contains(a.n.voters, id) || !slices.Contains(a.n.voters, a.n.id) {
		return
	}
	campaign := a.firstLiveVoter(id) == a.n.id
	taken, err := a.q.LeaderGone(id, campaign)
	if err != nil {
		a.log.Warn("quorum leader gone: hint not taken", "leader", id, "err", err)
		return
	}
	if taken {
		a.log.Info("gossip says the quorum leader is gone: electing a new one now", "leader", id, "campaign", campaign)
		a.handleReady()
	}
}

// firstLiveVoter returns the lowest voter id, other than except, that is
// this node or has a live process in the address book; -1 if none.
func (a *metadataActor) firstLiveVoter(except int32) int32 {
	voters := slices.Sorted(slices.Values(a.n.voters))
	for _, v := range voters {
		if v == except {
			continue
		}
		if v == a.n.id {
			return v
		}
		if _, ok := a.peers.active(v); ok {
			return v
		}
	}
	return -1
}

// processGone reports a refused connection to node's listener after
// gossip said it failed (probeGone), or after the connection a peer watch
// held to it closed (watched; peer_watch.go).
type processGone struct {
	node    int32
	watched bool
}

// probeGone checks, off the actor, whether a node gossip declared failed
// has lost its process: a connection to its Kafka listener that is
// refused means no process listens there any more (the kernel resets it),
// which a frozen process (its port still accepts) or a cut-off one (no
// answer) does not show. Only that evidence lets the controller fence
// before the session timeout (metadata.Sessions.ProcessGone): a process
// that is gone holds no lease.
func (a *metadataActor) probeGone(node int32) {
	if a.controller.Sessions == nil {
		return
	}
	br, ok := a.applied.Broker(node)
	if !ok || br.Fenced {
		return
	}
	addr, self, system, logger := br.Addr(), a.self, a.n.system, a.log
	go func() {
		conn, err := net.DialTimeout("tcp", addr, 300*time.Millisecond)
		if err == nil {
			_ = conn.Close()
			return
		}
		if errors.Is(err, syscall.ECONNREFUSED) {
			system.Root.Send(self, &processGone{node: node})
			return
		}
		logger.Debug("a failed node's listener does not refuse connections; its session runs out", "node", node, "addr", addr, "err", err)
	}()
}
