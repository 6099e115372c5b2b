package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// partState is one partition as a node's Metadata answer shows it.
type partState struct {
	topic     string
	partition int32
	leader    int32
	epoch     int32 // leader epoch
	replicas  []int32
	isr       []int32
}

// requestTimeout bounds one request pinned to one node.
const requestTimeout = time.Second

// metadata asks node via for the partitions of topics (every topic when
// topics is empty). A topic error fails the request.
func (c *weirCluster) metadata(ctx context.Context, via *node, topics []string) ([]partState, error) {
	req := kmsg.NewPtrMetadataRequest()
	if len(topics) > 0 {
		for _, t := range topics {
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(t)
			req.Topics = append(req.Topics, rt)
		}
	} else {
		req.Topics = nil // all topics
	}
	resp, err := c.pinned(ctx, via, req)
	if err != nil {
		return nil, err
	}
	mr := resp.(*kmsg.MetadataResponse)
	var out []partState
	for _, t := range mr.Topics {
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return nil, fmt.Errorf("metadata of topic %s from node %d: %w", topicName(t.Topic), via.id, err)
		}
		for _, p := range t.Partitions {
			leader := p.Leader
			if p.ErrorCode != 0 {
				leader = -1
			}
			out = append(out, partState{topic: topicName(t.Topic), partition: p.Partition, leader: leader, epoch: p.LeaderEpoch, replicas: p.Replicas, isr: p.ISR})
		}
	}
	return out, nil
}

// pinned sends req to node via alone, bounded by requestTimeout (a
// broken connection, as after the node restarted, is dialled again).
func (c *weirCluster) pinned(ctx context.Context, via *node, req kmsg.Request) (kmsg.Response, error) {
	seeds := c.meta[via.id-1].SeedBrokers()
	if len(seeds) == 0 {
		return nil, fmt.Errorf("node %d: no seed broker", via.id)
	}
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	resp, err := seeds[0].RetriableRequest(rctx, req)
	if err != nil {
		return nil, fmt.Errorf("%s to node %d: %w", kmsg.NameForKey(req.Key()), via.id, err)
	}
	return resp, nil
}

// quorumLeader returns the metadata quorum's leader (the controller) as
// node via sees it.
func (c *weirCluster) quorumLeader(ctx context.Context, via *node) (int32, error) {
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = "__cluster_metadata"
	rt.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	req.Topics = []kmsg.DescribeQuorumRequestTopic{rt}
	resp, err := c.pinned(ctx, via, req)
	if err != nil {
		return -1, err
	}
	qr := resp.(*kmsg.DescribeQuorumResponse)
	if err := kerr.ErrorForCode(qr.ErrorCode); err != nil {
		return -1, fmt.Errorf("describe quorum: %w", err)
	}
	if len(qr.Topics) != 1 || len(qr.Topics[0].Partitions) != 1 {
		return -1, errors.New("describe quorum: no partition in the answer")
	}
	return qr.Topics[0].Partitions[0].LeaderID, nil
}

// leaderCounts counts the partitions each node leads.
func leaderCounts(ps []partState) map[int32]int {
	m := map[int32]int{}
	for _, p := range ps {
		if p.leader >= 0 {
			m[p.leader]++
		}
	}
	return m
}

// mostLeader returns the node leading the most partitions (the lowest id
// on a tie) and how many it leads.
func mostLeader(ps []partState, nodes int) (int32, int) {
	counts := leaderCounts(ps)
	best, most := int32(1), -1
	for id := int32(1); id <= int32(nodes); id++ {
		if counts[id] > most {
			best, most = id, counts[id]
		}
	}
	return best, most
}

// allLed reports whether all want partitions are listed and each has a
// leader that is not gone.
func allLed(ps []partState, want int, gone int32) bool {
	if len(ps) != want {
		return false
	}
	for _, p := range ps {
		if p.leader < 0 || p.leader == gone {
			return false
		}
	}
	return true
}

// allPreferred reports whether all want partitions are listed and each is
// led by its preferred replica (the first of its assignment) with every
// replica in its ISR.
func allPreferred(ps []partState, want int) bool {
	if !allInSync(ps, want) {
		return false
	}
	for _, p := range ps {
		if len(p.replicas) == 0 || p.leader != p.replicas[0] {
			return false
		}
	}
	return true
}

// allInSync reports whether all want partitions are listed and each has
// every replica in its ISR and a leader.
func allInSync(ps []partState, want int) bool {
	if len(ps) != want {
		return false
	}
	for _, p := range ps {
		if p.leader < 0 || len(p.isr) != len(p.replicas) {
			return false
		}
	}
	return true
}

// pollUntil calls check every `every` until it reports true, and returns
// the time at which it did (taken right after the check's answer). Errors
// of single checks (a node not answering yet) are retried; the last one
// is quoted when timeout passes first.
func pollUntil(ctx context.Context, timeout, every time.Duration, what string, check func(context.Context) (bool, error)) (time.Time, error) {
	deadline := time.Now().Add(timeout)
	var last error
	for {
		ok, err := check(ctx)
		now := time.Now()
		if err == nil && ok {
			return now, nil
		}
		if err != nil {
			last = err
		}
		if now.After(deadline) {
			if last != nil {
				return now, fmt.Errorf("%s: not within %v (last error: %w)", what, timeout, last)
			}
			return now, fmt.Errorf("%s: not within %v", what, timeout)
		}
		select {
		case <-ctx.Done():
			return now, fmt.Errorf("%s: %w", what, context.Cause(ctx))
		case <-time.After(every):
		}
	}
}

// createTopic creates a topic through any node, retrying while the
// cluster is still forming, and waits until every partition has a leader
// and a full ISR as node via sees it.
func (c *weirCluster) createTopics(ctx context.Context, names []string, partitions int32, rf int16, configs map[string]*string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.seeds()...))
	if err != nil {
		return err
	}
	defer cl.Close()
	_, err = pollUntil(ctx, c.cfg.StartTimeout, 200*time.Millisecond, fmt.Sprintf("create %d topics", len(names)), func(ctx context.Context) (bool, error) {
		req := kmsg.NewPtrCreateTopicsRequest()
		req.TimeoutMillis = 30_000
		for _, name := range names {
			t := kmsg.NewCreateTopicsRequestTopic()
			t.Topic, t.NumPartitions, t.ReplicationFactor = name, partitions, rf
			for k, v := range configs {
				cfg := kmsg.NewCreateTopicsRequestTopicConfig()
				cfg.Name, cfg.Value = k, v
				t.Configs = append(t.Configs, cfg)
			}
			req.Topics = append(req.Topics, t)
		}
		rctx, cancel := context.WithTimeout(ctx, 40*time.Second)
		defer cancel()
		resp, err := req.RequestWith(rctx, cl)
		if err != nil {
			return false, err
		}
		var left []string
		for _, t := range resp.Topics {
			if err := kerr.ErrorForCode(t.ErrorCode); err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
				if !kerr.IsRetriable(err) && !errors.Is(err, kerr.InvalidReplicationFactor) {
					return false, fmt.Errorf("create topic %s: %w", t.Topic, err)
				}
				left = append(left, t.Topic)
			}
		}
		names = left
		if len(left) > 0 {
			return false, fmt.Errorf("create topics: %d not created yet", len(left))
		}
		return true, nil
	})
	return err
}

// waitInSync waits until node via shows every partition of topics (want
// in all) with a leader and a full ISR.
func (c *weirCluster) waitInSync(ctx context.Context, via *node, topics []string, want int, timeout, every time.Duration) (time.Time, error) {
	return pollUntil(ctx, timeout, every, fmt.Sprintf("%d partitions in sync on node %d", want, via.id), func(ctx context.Context) (bool, error) {
		ps, err := c.metadata(ctx, via, topics)
		if err != nil {
			return false, err
		}
		return allInSync(ps, want), nil
	})
}

// topicName reads a Metadata answer's nullable topic name.
func topicName(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
