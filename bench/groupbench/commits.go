package groupbench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// commitsTopic is the topic measurement (a) commits offsets of.
const commitsTopic = "groupbench-commits"

// CommitResult is one commit throughput measurement.
type CommitResult struct {
	Requests int64         // OffsetCommit requests answered without error
	Offsets  int64         // partition offsets they committed
	Elapsed  time.Duration // from the first request to the last answer
}

// RequestsPerSecond is the commit rate in requests (one consumer commit
// call each).
func (c CommitResult) RequestsPerSecond() float64 { return float64(c.Requests) / c.Elapsed.Seconds() }

// OffsetsPerSecond is the commit rate in partition offsets.
func (c CommitResult) OffsetsPerSecond() float64 { return float64(c.Offsets) / c.Elapsed.Seconds() }

// measureCommits runs measurement (a) against the broker at addr.
func measureCommits(ctx context.Context, cfg Config, addr string) (CommitResult, error) {
	clients := make([]*kgo.Client, cfg.Clients)
	for i := range clients {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
		if err != nil {
			return CommitResult{}, fmt.Errorf("kgo client: %w", err)
		}
		defer cl.Close()
		clients[i] = cl
	}
	id, err := createTopic(ctx, clients[0], commitsTopic, cfg.PartitionsPerGroup)
	if err != nil {
		return CommitResult{}, err
	}
	groups := make([]string, cfg.Groups)
	for g := range groups {
		groups[g] = fmt.Sprintf("groupbench-%03d", g)
		// Untimed: finds and loads each group's coordinator.
		if err := warmCommit(ctx, clients[g%len(clients)], groups[g], id, cfg.PartitionsPerGroup); err != nil {
			return CommitResult{}, err
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, cfg.Groups)
	start := time.Now()
	for g, group := range groups {
		wg.Go(func() {
			cl := clients[g%len(clients)]
			for round := 1; round <= cfg.CommitRounds && errs[g] == nil; round++ {
				errs[g] = commitOnce(ctx, cl, group, id, cfg.PartitionsPerGroup, int64(round))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	for _, err := range errs {
		if err != nil {
			return CommitResult{}, err
		}
	}
	n := int64(cfg.Groups) * int64(cfg.CommitRounds)
	return CommitResult{Requests: n, Offsets: n * int64(cfg.PartitionsPerGroup), Elapsed: elapsed}, nil
}

// warmCommit commits offset 0 as group until the coordinator takes it:
// while the broker creates the offsets topic or loads the group's
// partition of it, the commit is answered COORDINATOR_NOT_AVAILABLE,
// COORDINATOR_LOAD_IN_PROGRESS or NOT_COORDINATOR, which a Kafka client
// retries, and so does this, until ctx ends.
func warmCommit(ctx context.Context, cl *kgo.Client, group string, id [16]byte, n int) error {
	for {
		err := commitOnce(ctx, cl, group, id, n, 0)
		if err == nil || !coordinatorStarting(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (%w)", err, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// coordinatorStarting reports whether err is one of the answers a group's
// coordinator gives while it is being placed or loaded.
func coordinatorStarting(err error) bool {
	return errors.Is(err, kerr.CoordinatorNotAvailable) || errors.Is(err, kerr.CoordinatorLoadInProgress) ||
		errors.Is(err, kerr.NotCoordinator)
}

// commitOnce commits offset at for partitions 0..n-1 of commitsTopic
// (whose id is id, for OffsetCommit v10) as group, without membership
// (generation -1).
func commitOnce(ctx context.Context, cl *kgo.Client, group string, id [16]byte, n int, at int64) error {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group = group
	req.Generation = -1
	t := kmsg.NewOffsetCommitRequestTopic()
	t.Topic, t.TopicID = commitsTopic, id
	for p := range n {
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition = int32(p)
		rp.Offset = at
		rp.LeaderEpoch = -1
		t.Partitions = append(t.Partitions, rp)
	}
	req.Topics = append(req.Topics, t)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("commit for group %s: %w", group, err)
	}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
				return fmt.Errorf("commit for group %s, %s-%d: %w", group, rt.Topic, rp.Partition, err)
			}
		}
	}
	return nil
}

// createTopic creates topic with n partitions and returns its id.
func createTopic(ctx context.Context, cl *kgo.Client, topic string, n int) ([16]byte, error) {
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, int32(n), 1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return [16]byte{}, fmt.Errorf("create topic %s: %w", topic, err)
	}
	return resp.ID, nil
}
