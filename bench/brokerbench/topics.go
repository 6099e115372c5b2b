package brokerbench

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// leaderPoll is the pause between metadata requests while waiting for new
// partitions to get leaders.
const leaderPoll = 50 * time.Millisecond

// createTopics creates topics of partitions partitions each (replication
// factor 1, with configs) on the broker at addr, and waits until every
// partition has a leader, for at most timeout.
func createTopics(ctx context.Context, addr string, topics []string, partitions int32, configs map[string]*string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return fmt.Errorf("admin client for %s: %w", addr, err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	resp, err := adm.CreateTopics(ctx, partitions, 1, configs, topics...)
	if err != nil {
		return fmt.Errorf("create topics %v: %w", topics, err)
	}
	if err := resp.Error(); err != nil {
		return fmt.Errorf("create topics %v: %w", topics, err)
	}
	for {
		missing, err := leaderless(ctx, adm, topics, partitions)
		switch {
		case err != nil:
			return err
		case missing == 0:
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("topics %v: %d partitions still without a leader: %w", topics, missing, context.Cause(ctx))
		case <-time.After(leaderPoll):
		}
	}
}

// leaderless returns how many of the topics' partitions have no leader
// yet, by the broker's metadata.
func leaderless(ctx context.Context, adm *kadm.Client, topics []string, partitions int32) (int, error) {
	details, err := adm.ListTopics(ctx, topics...)
	if err != nil {
		return 0, fmt.Errorf("metadata of topics %v: %w", topics, err)
	}
	missing := 0
	for _, t := range topics {
		d := details[t]
		ready := 0
		for _, p := range d.Partitions {
			if p.Err == nil && p.Leader >= 0 {
				ready++
			}
		}
		missing += int(partitions) - ready
	}
	return missing, nil
}
