package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirmq/weir/actors/partition"
	"github.com/weirmq/weir/actors/replicafetcher"
	"github.com/weirmq/weir/cluster/config"
	"github.com/weirmq/weir/cluster/metadata"
	"github.com/weirmq/weir/wire"
)

// fetcherSet is the node's replica fetchers: one per leader node it
// follows partitions of (docs/DESIGN.md "Replication"), started on first
// use. Each partition is followed by at most one fetcher, its leader's.
type fetcherSet struct {
	system *actor.ActorSystem
	node   int32
	broker *config.Broker
	image  func() *metadata.Image
	log    *slog.Logger

	mu       sync.Mutex
	fetchers map[int32]*replicafetcher.Fetcher
	// following maps a partition to the leader it is followed from.
	following map[replicaKey]int32
}

func newFetcherSet(system *actor.ActorSystem, node int32, broker *config.Broker, image func() *metadata.Image, logger *slog.Logger) *fetcherSet {
	return &fetcherSet{system: system, node: node, broker: broker, image: image, log: logger,
		fetchers: map[int32]*replicafetcher.Fetcher{}, following: map[replicaKey]int32{}}
}

// follow has the partition fetched from leader at leaderEpoch into
// replica (and no longer from any other leader).
func (s *fetcherSet) follow(topic *metadata.Topic, index int32, leader, leaderEpoch int32, replica *partition.Client) {
	k := replicaKey{topic.ID(), index}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.following[k]; ok && old != leader {
		s.fetchers[old].Unfollow([]replicafetcher.PartitionRef{{TopicID: k.topic, Partition: index}})
	}
	f := s.fetchers[leader]
	if f == nil {
		f = replicafetcher.Spawn(s.system, s.fetcherConfig(leader))
		s.fetchers[leader] = f
	}
	s.following[k] = leader
	f.Follow([]replicafetcher.Followed{{TopicID: k.topic, Topic: topic.Name(), Partition: index, LeaderEpoch: leaderEpoch, Replica: replica}})
}

// unfollow stops fetching the partition (it leads now, is leaderless, or
// moved away).
func (s *fetcherSet) unfollow(topic metadata.UUID, index int32) {
	k := replicaKey{topic, index}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.following[k]; ok {
		s.fetchers[old].Unfollow([]replicafetcher.PartitionRef{{TopicID: topic, Partition: index}})
		delete(s.following, k)
	}
}

// stop stops every fetcher.
func (s *fetcherSet) stop() {
	s.mu.Lock()
	fs := s.fetchers
	s.fetchers = map[int32]*replicafetcher.Fetcher{}
	s.following = map[replicaKey]int32{}
	s.mu.Unlock()
	for leader, f := range fs {
		if err := f.Stop(); err != nil {
			s.log.Warn("stopping replica fetcher", "leader", leader, "err", err)
		}
	}
}

// fetcherConfig is the fetcher of leader's settings: replica.fetch.*.
func (s *fetcherSet) fetcherConfig(leader int32) replicafetcher.Config {
	b := s.broker
	clientID := fmt.Sprintf("weir-replica-fetcher-%d", s.node)
	return replicafetcher.Config{
		NodeID: s.node, Leader: leader,
		Dial: func(ctx context.Context, leader int32) (replicafetcher.Conn, error) {
			br, ok := s.image().Broker(leader)
			if !ok {
				return nil, fmt.Errorf("cluster: leader %d is not registered", leader)
			}
			return wire.DialBroker(ctx, br.Addr(), clientID)
		},
		MaxWaitMs:         int32(b.Int("replica.fetch.wait.max.ms")),
		MinBytes:          int32(b.Int("replica.fetch.min.bytes")),
		MaxBytes:          int32(b.Int("replica.fetch.response.max.bytes")),
		PartitionMaxBytes: int32(b.Int("replica.fetch.max.bytes")),
		BackoffMs:         int32(b.Int("replica.fetch.backoff.ms")),
		Logger:            s.log.With("replica_fetcher", leader),
	}
}
