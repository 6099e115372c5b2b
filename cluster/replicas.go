package cluster

import (
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirmq/weir/actors/partition"
	"github.com/weirmq/weir/cluster/config"
	"github.com/weirmq/weir/cluster/metadata"
	"github.com/weirmq/weir/cluster/quorum"
	"github.com/weirmq/weir/log"
)

// replicaKey names a partition by topic id, so that a topic deleted and
// created again under its name is a different partition.
type replicaKey struct {
	topic metadata.UUID
	index int32
}

// replica is one partition actor this node runs, with what the
// reconciler last told it.
type replica struct {
	client    *partition.Client
	tp        log.TopicPartition
	log       *log.Log
	overrides map[string]string // the topic configs its log was set up with
	// leadership last sent to the actor
	leader, leaderEpoch, partitionEpoch int32
	// deleted is set when the replica stops because its topic (or
	// partition) is gone from the image.
	deleted bool
}

// replicaSet is the node's partition actors, changed only by the metadata
// actor (reconcile) and read from any goroutine (get, all).
type replicaSet struct {
	system *actor.ActorSystem
	logs   *log.Manager
	broker *config.Broker
	node   int32
	now    func() time.Time
	log    *slog.Logger
	// coords hears about __consumer_offsets leadership (coordinators.go);
	// set once before the first reconcile.
	coords *coordinators
	// fetchers copy the partitions this node follows from their leaders;
	// isr collects its leaders' ISR proposals. Set once before the first
	// reconcile.
	fetchers *fetcherSet
	isr      *isrChanges
	// leaseValid is the node's lease, checked by the leaders at append.
	leaseValid func() bool

	mu sync.RWMutex
	m  map[replicaKey]*replica
	// clients is every actor's Client as all returns it, nil after a
	// change of m (rebuilt on the next all): the ticker reads it every
	// tick.
	clients []*partition.Client
}

func newReplicaSet(system *actor.ActorSystem, logs *log.Manager, broker *config.Broker, node int32, now func() time.Time, logger *slog.Logger) *replicaSet {
	return &replicaSet{system: system, logs: logs, broker: broker, node: node, now: now, log: logger, m: map[replicaKey]*replica{}}
}

// get returns the actor of a partition, or nil.
func (s *replicaSet) get(topic metadata.UUID, index int32) *partition.Client {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if r := s.m[replicaKey{topic, index}]; r != nil {
		return r.client
	}
	return nil
}

// all returns every partition actor: a shared slice, not to be modified.
func (s *replicaSet) all() []*partition.Client {
	s.mu.RLock()
	out := s.clients
	s.mu.RUnlock()
	if out != nil {
		return out
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.clients == nil {
		s.clients = make([]*partition.Client, 0, len(s.m))
		for _, r := range s.m {
			s.clients = append(s.clients, r.client)
		}
	}
	return s.clients
}

// reconcile makes the partition actors match img: replicas of deleted
// topics are stopped and their logs deleted first (a topic created again
// under the same name reuses the directory name), then every partition
// with a replica on this node gets an actor, its topic's configs and its
// leadership. A partition whose log cannot be opened is logged and left
// without an actor (clients get NOT_LEADER_OR_FOLLOWER); the next image
// retries it.
func (s *replicaSet) reconcile(img *metadata.Image) {
	live := make(map[replicaKey]bool, len(s.m))
	for _, t := range img.Topics() {
		for i := range t.NumPartitions() {
			if p, _ := t.Partition(i); p.IsReplica(s.node) {
				live[replicaKey{t.ID(), i}] = true
			}
		}
	}
	s.removeGone(img, live)
	for _, t := range img.Topics() {
		var overrides map[string]string
		for i := range t.NumPartitions() {
			p, _ := t.Partition(i)
			if !p.IsReplica(s.node) {
				continue
			}
			if overrides == nil {
				overrides = img.Config(metadata.TopicResource(t.Name()))
				if overrides == nil {
					overrides = map[string]string{}
				}
			}
			if err := s.reconcileOne(t, p, overrides); err != nil {
				s.log.Error("partition replica not started", "topic", t.Name(), "partition", i, "err", err)
			}
		}
	}
}

// removeGone stops the replicas that are not live and deletes their logs.
// Those of topics img no longer holds answer what they still hold
// UNKNOWN_TOPIC_OR_PARTITION, the others (moved away) NOT_LEADER_OR_FOLLOWER.
func (s *replicaSet) removeGone(img *metadata.Image, live map[replicaKey]bool) {
	var gone []*replica
	s.mu.Lock()
	for k, r := range s.m {
		if !live[k] {
			s.fetchers.unfollow(k.topic, k.index)
			if _, ok := img.Partition(k.topic, k.index); !ok {
				r.deleted = true
			}
			gone = append(gone, r)
			delete(s.m, k)
			s.clients = nil
		}
	}
	s.mu.Unlock()
	if len(gone) == 0 {
		return
	}
	tps := make([]log.TopicPartition, len(gone))
	for i, r := range gone {
		s.coords.removed(r.tp)
		tps[i] = r.tp
	}
	s.stopReplicas(gone)
	if err := s.logs.DeleteLogs(tps); err != nil {
		s.log.Error("deleting partition logs", "partitions", len(tps), "err", err)
	}
}

// removeStrays sets aside, once img holds everything applied before the
// node started, the partition logs on disk that img gives no replica on
// this node, or whose partition.metadata names another topic id: what a
// crash leaves when it comes between a deletion's commit and the removal
// of its directories. Left in place, a topic created again under the name
// would open them and serve the deleted topic's records. Kafka deals with
// such "stray" logs at start-up too. They are renamed "<name>.<time>-stray"
// rather than deleted, so nothing is lost if a directory was not weir's
// to judge. The metadata log's own partition is never touched.
func (s *replicaSet) removeStrays(img *metadata.Image) {
	onDisk, err := s.logs.Partitions()
	if err != nil {
		s.log.Error("listing partition logs for stray removal", "err", err)
		return
	}
	want := make(map[log.TopicPartition]metadata.UUID)
	for _, t := range img.Topics() {
		for i := range t.NumPartitions() {
			if p, _ := t.Partition(i); p.IsReplica(s.node) {
				want[log.TopicPartition{Topic: t.Name(), Partition: i}] = t.ID()
			}
		}
	}
	var strays []log.TopicPartition
	for _, tp := range onDisk {
		if tp == quorum.MetadataPartition {
			continue
		}
		if id, live := want[tp]; live {
			got, ok, err := s.logs.DirTopicID(tp)
			if err != nil {
				s.log.Error("reading partition topic id", "partition", tp.String(), "err", err)
				continue
			}
			if !ok || got == [16]byte(id) {
				continue
			}
		}
		strays = append(strays, tp)
	}
	if len(strays) == 0 {
		return
	}
	aside, err := s.logs.SetAsideLogs(strays)
	if err != nil {
		s.log.Error("setting aside stray partition logs", "partitions", len(strays), "err", err)
	}
	for _, path := range aside {
		s.log.Warn("partition log of no topic this node holds set aside; remove it once not needed", "path", path)
	}
}

// stopConcurrency bounds how many partition actors stopReplicas stops at
// once: each stop may wait for its producer snapshot's fsync.
const stopConcurrency = 16

// stopReplicas stops the actors of rs, several at a time, and returns once
// all have stopped.
func (s *replicaSet) stopReplicas(rs []*replica) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, stopConcurrency)
	for _, r := range rs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			stop := r.client.Stop
			if r.deleted {
				stop = r.client.StopDeleted
			}
			if err := stop(); err != nil {
				s.log.Error("stopping partition actor", "partition", r.tp.String(), "err", err)
			}
		}()
	}
	wg.Wait()
}

// reconcileOne starts, reconfigures and informs one partition's actor.
func (s *replicaSet) reconcileOne(t *metadata.Topic, p metadata.Partition, overrides map[string]string) error {
	k := replicaKey{t.ID(), p.Index}
	s.mu.RLock()
	r := s.m[k]
	s.mu.RUnlock()
	if r == nil {
		var err error
		if r, err = s.start(t, p.Index, overrides); err != nil {
			return err
		}
		s.mu.Lock()
		s.m[k] = r
		s.clients = nil
		s.mu.Unlock()
	} else if !maps.Equal(r.overrides, overrides) {
		if err := s.reconfigure(r, overrides); err != nil {
			return err
		}
	}
	s.lead(t, r, p)
	return nil
}

// start opens the partition's log with the topic's configs and spawns its
// actor, a follower until lead tells it otherwise.
func (s *replicaSet) start(t *metadata.Topic, index int32, overrides map[string]string) (*replica, error) {
	lc, rc, err := s.configs(overrides)
	if err != nil {
		return nil, err
	}
	tp := log.TopicPartition{Topic: t.Name(), Partition: index}
	// A directory left by an earlier topic of this name (its deletion
	// failed) must not be served as this topic's log.
	if id, ok, err := s.logs.DirTopicID(tp); err != nil {
		return nil, fmt.Errorf("open log %s: %w", tp, err)
	} else if ok && id != [16]byte(t.ID()) {
		s.log.Warn("removing the log of an earlier topic of the same name", "partition", tp.String())
		if err := s.logs.DeleteLogs([]log.TopicPartition{tp}); err != nil {
			return nil, fmt.Errorf("open log %s: the log of an earlier topic of the same name is in the way: %w", tp, err)
		}
	}
	l, err := s.logs.OpenLog(tp, lc, t.ID())
	if err != nil {
		return nil, fmt.Errorf("open log %s: %w", tp, err)
	}
	topicID := t.ID()
	c := partition.Spawn(s.system, partition.ActorConfig{Log: l, Replica: rc, Now: s.now, Logger: s.log,
		ProposeISR: func(ch partition.ISRChange) { s.isr.propose(topicID, index, ch) }, LeaseValid: s.leaseValid})
	return &replica{client: c, tp: tp, log: l, overrides: maps.Clone(overrides), leader: -2, leaderEpoch: -1, partitionEpoch: -1}, nil
}

// reconfigure applies changed topic configs to the log and to the
// replica's own settings (max.message.bytes, min.insync.replicas, the
// flush policy, message.timestamp.type).
func (s *replicaSet) reconfigure(r *replica, overrides map[string]string) error {
	lc, rc, err := s.configs(overrides)
	if err != nil {
		return err
	}
	if err := r.log.SetConfig(lc); err != nil {
		return fmt.Errorf("reconfigure %s: %w", r.tp, err)
	}
	r.client.Reconfigure(rc)
	r.overrides = maps.Clone(overrides)
	return nil
}

// lead sends the partition's leadership to its actor when it changed.
func (s *replicaSet) lead(t *metadata.Topic, r *replica, p metadata.Partition) {
	if r.leader == p.Leader && r.leaderEpoch == p.LeaderEpoch && r.partitionEpoch == p.PartitionEpoch {
		return
	}
	r.leader, r.leaderEpoch, r.partitionEpoch = p.Leader, p.LeaderEpoch, p.PartitionEpoch
	// The group coordinator of a __consumer_offsets partition follows its
	// leadership (after the actor has been told).
	defer s.coords.leadership(r.tp, r.client, p, s.node)
	if p.Leader == s.node {
		s.fetchers.unfollow(t.ID(), p.Index)
		r.client.BecomeLeader(&partition.BecomeLeader{LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch,
			ISR: p.ISR, Replicas: p.Replicas})
		return
	}
	r.client.BecomeFollower(&partition.BecomeFollower{Leader: p.Leader, LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch})
	if p.HasLeader() {
		s.fetchers.follow(t, p.Index, p.Leader, p.LeaderEpoch, r.client)
	} else {
		s.fetchers.unfollow(t.ID(), p.Index)
	}
}

// configs resolves a topic's configs into the log's and the replica's.
func (s *replicaSet) configs(overrides map[string]string) (log.Config, partition.Config, error) {
	resolved, err := s.broker.ResolveTopic(overrides)
	if err != nil {
		return log.Config{}, partition.Config{}, err
	}
	lc, err := config.ToLogConfig(resolved)
	if err != nil {
		return log.Config{}, partition.Config{}, err
	}
	rc := partition.DefaultConfig()
	rc.NodeID = s.node
	for _, r := range resolved {
		if r.Null {
			continue
		}
		switch r.Name {
		case "max.message.bytes":
			_, err = fmt.Sscan(r.Value, &rc.MaxMessageBytes)
		case "min.insync.replicas":
			_, err = fmt.Sscan(r.Value, &rc.MinInSyncReplicas)
		case "message.timestamp.type":
			rc.LogAppendTime = r.Value == "LogAppendTime"
		case "message.timestamp.before.max.ms":
			_, err = fmt.Sscan(r.Value, &rc.TimestampBeforeMaxMs)
		case "message.timestamp.after.max.ms":
			_, err = fmt.Sscan(r.Value, &rc.TimestampAfterMaxMs)
		}
		if err != nil {
			return log.Config{}, partition.Config{}, fmt.Errorf("%w: %s=%q: %w", config.ErrInvalidConfig, r.Name, r.Value, err)
		}
	}
	rc.GroupCommit = lc.FlushMessages == 1
	rc.Compacted = lc.CleanupCompact
	rc.ProducerIDExpirationMs = s.broker.Int("producer.id.expiration.ms")
	rc.ReplicaLagTimeMaxMs = s.broker.Int("replica.lag.time.max.ms")
	return lc, rc, nil
}

// stopAll stops every partition actor (the node is shutting down); the
// logs stay for the Manager to close.
func (s *replicaSet) stopAll() {
	s.mu.Lock()
	rs := make([]*replica, 0, len(s.m))
	for k, r := range s.m {
		rs = append(rs, r)
		delete(s.m, k)
	}
	s.clients = nil
	s.mu.Unlock()
	s.stopReplicas(rs)
}
