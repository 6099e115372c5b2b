package clientprobe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Topic is the measured topic (one partition).
const Topic = "failover"

// request is one observed request.
type request struct {
	at   time.Time
	node int32
	key  int16
	// version is the request's version.
	version int16
	// ours: a Produce carrying a batch for Topic's partition 0.
	ours bool
}

// fakeCluster is a kfake cluster with its listeners tracked (so a broker
// can be killed: listener and open connections closed at once) and every
// Metadata and Produce request recorded.
type fakeCluster struct {
	c     *kfake.Cluster
	addrs map[int32]string // node -> host:port
	lns   *listeners

	// From the metadata before the run.
	topicID     [16]byte
	leader      int32
	leaderEpoch int32
	brokers     []kmsg.MetadataResponseBroker
	clusterID   *string

	mu   sync.Mutex
	cond *sync.Cond
	reqs []request
}

// listeners records each kfake listener and the connections it accepted.
type listeners struct {
	mu  sync.Mutex
	all map[string]*trackedListener // by address
}

type trackedListener struct {
	net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func (l *trackedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.mu.Lock()
		l.conns = append(l.conns, c)
		l.mu.Unlock()
	}
	return c, err
}

// kill closes the listener and every connection it accepted: what a
// SIGKILLed broker's kernel does (connections reset, new ones refused).
func (l *trackedListener) kill() {
	_ = l.Listener.Close()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.conns {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // RST, as the kernel sends for a dead process
		}
		_ = c.Close()
	}
}

func (ls *listeners) listen(network, address string) (net.Listener, error) {
	ln, err := net.Listen(network, address)
	if err != nil {
		return nil, err
	}
	t := &trackedListener{Listener: ln}
	ls.mu.Lock()
	ls.all[ln.Addr().String()] = t
	ls.mu.Unlock()
	return t, nil
}

func newFakeCluster(ctx context.Context) (*fakeCluster, error) {
	ls := &listeners{all: map[string]*trackedListener{}}
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(1, Topic), kfake.ListenFn(ls.listen))
	if err != nil {
		return nil, fmt.Errorf("kfake: %w", err)
	}
	fc := &fakeCluster{c: c, lns: ls, addrs: map[int32]string{}}
	fc.cond = sync.NewCond(&fc.mu)
	if err := fc.loadMetadata(ctx); err != nil {
		c.Close()
		return nil, err
	}
	// Observers first: they run before any injector and never handle.
	for _, key := range []int16{kmsg.Metadata.Int16(), kmsg.Produce.Int16()} {
		c.ControlKey(key, func(req kmsg.Request) (kmsg.Response, error, bool) {
			fc.record(req)
			return nil, nil, false
		})
	}
	return fc, nil
}

// loadMetadata reads brokers, the topic id, leader and leader epoch with a
// throwaway client, before any observer is installed.
func (fc *fakeCluster) loadMetadata(ctx context.Context) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(fc.c.ListenAddrs()...))
	if err != nil {
		return err
	}
	defer cl.Close()
	req := kmsg.NewPtrMetadataRequest()
	t := kmsg.NewMetadataRequestTopic()
	t.Topic = kmsg.StringPtr(Topic)
	req.Topics = append(req.Topics, t)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	fc.brokers = resp.Brokers
	fc.clusterID = resp.ClusterID
	for _, b := range resp.Brokers {
		fc.addrs[b.NodeID] = net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return errors.New("metadata: topic not found")
	}
	p := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	fc.topicID = resp.Topics[0].TopicID
	fc.leader, fc.leaderEpoch = p.Leader, p.LeaderEpoch
	return nil
}

func (fc *fakeCluster) record(req kmsg.Request) {
	r := request{at: time.Now(), node: fc.c.CurrentNode(), key: req.Key(), version: req.GetVersion()}
	if pr, ok := req.(*kmsg.ProduceRequest); ok {
		r.ours = fc.carriesOurs(pr)
	}
	fc.mu.Lock()
	fc.reqs = append(fc.reqs, r)
	fc.mu.Unlock()
	fc.cond.Broadcast()
}

func (fc *fakeCluster) carriesOurs(pr *kmsg.ProduceRequest) bool {
	for _, t := range pr.Topics {
		if t.Topic == Topic || t.TopicID == fc.topicID {
			for _, p := range t.Partitions {
				if p.Partition == 0 {
					return true
				}
			}
		}
	}
	return false
}

// requests returns a copy of what was recorded.
func (fc *fakeCluster) requests() []request {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	return append([]request(nil), fc.reqs...)
}

// waitProduceAt waits until a Produce for our partition reaches node
// (any node but except, when node is -1) after since.
func (fc *fakeCluster) waitProduceAt(node, except int32, since time.Time, timeout time.Duration) (time.Time, bool) {
	deadline := time.Now().Add(timeout)
	timer := time.AfterFunc(timeout, fc.cond.Broadcast)
	defer timer.Stop()
	fc.mu.Lock()
	defer fc.mu.Unlock()
	for {
		for _, r := range fc.reqs {
			if r.key == kmsg.Produce.Int16() && r.ours && r.at.After(since) &&
				(r.node == node || (node < 0 && r.node != except)) {
				return r.at, true
			}
		}
		if time.Now().After(deadline) {
			return time.Time{}, false
		}
		fc.cond.Wait()
	}
}

// other returns a node other than n.
func (fc *fakeCluster) other(n int32) int32 {
	for id := range fc.addrs {
		if id != n {
			return id
		}
	}
	return -1
}

func (fc *fakeCluster) close() { fc.c.Close() }

// notLeader answers every Produce that reaches node old with
// NOT_LEADER_OR_FOLLOWER for each partition, with the KIP-951 hint (new
// leader, its epoch and endpoint; Produce v10+) when hint is set. The
// first answer's time goes to first.
func (fc *fakeCluster) notLeader(old, newLeader, newEpoch int32, hint bool, first func(time.Time)) {
	var once sync.Once
	fc.c.ControlKey(kmsg.Produce.Int16(), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		fc.c.KeepControl()
		if fc.c.CurrentNode() != old {
			return nil, nil, false
		}
		req := kreq.(*kmsg.ProduceRequest)
		resp := req.ResponseKind().(*kmsg.ProduceResponse)
		withHint := hint && req.Version >= 10
		for _, rt := range req.Topics {
			st := kmsg.NewProduceResponseTopic()
			st.Topic, st.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				sp := kmsg.NewProduceResponseTopicPartition()
				sp.Partition = rp.Partition
				sp.ErrorCode = kerr.NotLeaderForPartition.Code
				if withHint {
					sp.CurrentLeader.LeaderID = newLeader
					sp.CurrentLeader.LeaderEpoch = newEpoch
				}
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		if withHint {
			for _, b := range fc.brokers {
				if b.NodeID == newLeader {
					nb := kmsg.NewProduceResponseBroker()
					nb.NodeID, nb.Host, nb.Port, nb.Rack = b.NodeID, b.Host, b.Port, b.Rack
					resp.Brokers = append(resp.Brokers, nb)
				}
			}
		}
		once.Do(func() { first(time.Now()) })
		return resp, nil, true
	})
}

// leaderNotAvailableWhile answers every Metadata request, while electing
// returns true, with our partition leaderless (LEADER_NOT_AVAILABLE,
// leader -1), as a cluster in the middle of an election would, the
// brokers as they are; afterwards kfake answers normally.
func (fc *fakeCluster) leaderNotAvailableWhile(electing func() bool, answered func()) {
	fc.c.ControlKey(kmsg.Metadata.Int16(), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		if !electing() {
			return nil, nil, false
		}
		fc.c.KeepControl()
		req := kreq.(*kmsg.MetadataRequest)
		resp := req.ResponseKind().(*kmsg.MetadataResponse)
		resp.Brokers = fc.brokers
		resp.ClusterID = fc.clusterID
		resp.ControllerID = fc.brokers[0].NodeID
		t := kmsg.NewMetadataResponseTopic()
		t.Topic = kmsg.StringPtr(Topic)
		t.TopicID = fc.topicID
		p := kmsg.NewMetadataResponseTopicPartition()
		p.Partition = 0
		p.ErrorCode = kerr.LeaderNotAvailable.Code
		p.Leader = -1
		p.LeaderEpoch = fc.leaderEpoch
		for id := range fc.addrs {
			p.Replicas = append(p.Replicas, id)
			p.ISR = append(p.ISR, id)
		}
		t.Partitions = append(t.Partitions, p)
		resp.Topics = append(resp.Topics, t)
		answered()
		return resp, nil, true
	})
}

// killListener kills broker node's network side: its listener and every
// connection it accepted close (RST), so clients are refused from now on,
// while kfake still lists it and names it leader until RemoveNode: a
// broker that died but is not yet known dead. RemoveNode then moves its
// partitions to the others and drops it from Metadata (as a fenced broker
// drops out of KRaft's metadata).
func (fc *fakeCluster) killListener(node int32) error {
	fc.lns.mu.Lock()
	l := fc.lns.all[fc.addrs[node]]
	fc.lns.mu.Unlock()
	if l == nil {
		return fmt.Errorf("no listener for node %d", node)
	}
	l.kill()
	return nil
}
