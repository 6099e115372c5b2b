package cluster

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/weirmq/weir/cluster/membership"
	"github.com/weirmq/weir/cluster/quorum"
	pb "go.etcd.io/raft/v3/raftpb"
)

// peerBook maps node ids to the remote address of their live process, as
// gossip last told it. It is a hint for routing messages: the metadata
// image's registrations are the fallback, and nothing decided about the
// cluster depends on it.
type peerBook map[int32]peer

// peer is one node's live process as gossip knows it.
type peer struct {
	name       string // the memberlist name (one per process)
	remoteAddr string
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
	addr := a.peers[node].remoteAddr
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
		a.peers[id] = peer{name: e.Member.Name, remoteAddr: addr}
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
		if p, ok := a.peers[id]; !ok || p.name != e.Member.Name {
			return // an older process of the node; the live one stays
		}
		delete(a.peers, id)
		if s := a.controller.Sessions; s != nil {
			s.MemberFailed(id, a.nowMs())
		}
	}
}

// usedByOther reports whether a live process other than name has addr (a
// node restarted on the same port).
func (b peerBook) usedByOther(addr, name string) bool {
	for _, p := range b {
		if p.remoteAddr == addr && p.name != name {
			return true
		}
	}
	return false
}
