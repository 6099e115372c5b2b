package clientprobe

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Scenario is how the leader fails.
type Scenario string

// The scenarios.
const (
	// NotLeader: the partition moves; the old leader answers Produce with
	// NOT_LEADER_OR_FOLLOWER and no hint; Metadata shows the new leader.
	NotLeader Scenario = "NOT_LEADER_OR_FOLLOWER, no hint"
	// NotLeaderHint: the same with the KIP-951 hint (CurrentLeader with
	// the new leader and its bumped epoch, the new leader's endpoint in
	// NodeEndpoints) where the Produce version has them (v10+).
	NotLeaderHint Scenario = "NOT_LEADER_OR_FOLLOWER + KIP-951 hint"
	// Refused: the leader dies: its listener and connections close (RST)
	// and reconnects are refused; the partition moves to a survivor and
	// Metadata no longer lists the dead broker.
	Refused Scenario = "leader killed (connection refused)"
	// RefusedLateElection: the leader dies as in Refused, but the
	// partition moves (and Metadata stops naming the dead broker) only
	// Options.ElectionDelay later, as in a cluster that must first detect
	// the death: until then Metadata names the dead broker as leader.
	RefusedLateElection Scenario = "leader killed, elected 400 ms later"
	// LeaderNotAvailable: an election window: the old leader answers
	// NOT_LEADER_OR_FOLLOWER without a hint and Metadata reports the
	// partition LEADER_NOT_AVAILABLE for Options.Window and until the
	// client has asked at least once, then the new leader.
	LeaderNotAvailable Scenario = "LEADER_NOT_AVAILABLE in Metadata"
)

// Scenarios lists them in report order.
var Scenarios = []Scenario{NotLeader, NotLeaderHint, Refused, RefusedLateElection, LeaderNotAvailable}

// Options says what Measure does.
type Options struct {
	Client   Client
	Scenario Scenario
	Rounds   int
	// InjectAfter is how long the client produces after its first
	// acknowledged record (and so after its first Metadata) before the
	// failure; franz-go's MetadataMinAge (5 s) makes this matter.
	InjectAfter time.Duration
	// Window is how long Metadata reports LEADER_NOT_AVAILABLE at least;
	// it goes on until the client has been answered so once after the
	// failure.
	Window time.Duration
	// ElectionDelay is how long after the kill RefusedLateElection moves
	// the partition (400 ms: the fast membership profile's detection
	// time, roughly).
	ElectionDelay time.Duration
	Logf          func(format string, args ...any)
}

// Round is one failover as the brokers saw it; times are from the
// failure: the first error answer (NOT_LEADER scenarios, LEADER_NOT_AVAILABLE)
// or the kill.
type Round struct {
	// SinceMetadata is the age of the client's last Metadata request at
	// the failure.
	SinceMetadata time.Duration
	// ToMetadata is the time to the client's next Metadata request.
	ToMetadata time.Duration
	// ToNewLeader is the time to its first Produce at the new leader.
	ToNewLeader time.Duration
	// AfterLeaderKnown is ToNewLeader minus the time Metadata started
	// naming the new leader (differs from ToNewLeader for
	// LeaderNotAvailable and RefusedLateElection).
	AfterLeaderKnown time.Duration
	// Metadata is the number of Metadata requests before ToNewLeader.
	Metadata int
	// Retries is the number of Produce requests for the partition the old
	// leader got after its first error answer, or for Refused the failed
	// connection attempts to it the client reported.
	Retries int
	// MetadataGaps are the intervals between the client's Metadata
	// requests after the failure, until the new leader was found.
	MetadataGaps []time.Duration
	// Acked and Failed count the client's records over the round.
	Acked, Failed int64
	Version       string
	// ProduceVersion and MetadataVersion are the versions the client
	// used for those requests.
	ProduceVersion, MetadataVersion int16
}

// Measure runs opts.Rounds failovers, each on a fresh cluster and client.
func Measure(ctx context.Context, opts Options) ([]Round, error) {
	if opts.Rounds <= 0 {
		return nil, errors.New("rounds must be positive")
	}
	if opts.Window <= 0 {
		opts.Window = time.Second
	}
	if opts.ElectionDelay <= 0 {
		opts.ElectionDelay = 400 * time.Millisecond
	}
	var out []Round
	for i := range opts.Rounds {
		r, err := measureRound(ctx, opts)
		if err != nil {
			return out, fmt.Errorf("%s, %s, round %d: %w", opts.Client, opts.Scenario, i, err)
		}
		if opts.Logf != nil {
			opts.Logf("%s | %s | round %d: since metadata %s, next metadata +%s, new leader +%s (after known +%s), %d metadata, %d retries, acked %d failed %d",
				opts.Client, opts.Scenario, i, r.SinceMetadata.Round(time.Millisecond), r.ToMetadata.Round(time.Millisecond),
				r.ToNewLeader.Round(time.Millisecond), r.AfterLeaderKnown.Round(time.Millisecond), r.Metadata, r.Retries, r.Acked, r.Failed)
		}
		out = append(out, r)
	}
	return out, nil
}

func measureRound(ctx context.Context, opts Options) (Round, error) {
	fc, err := newFakeCluster(ctx)
	if err != nil {
		return Round{}, err
	}
	defer fc.close()
	old := fc.leader
	var seeds []string
	for _, a := range fc.addrs {
		seeds = append(seeds, a)
	}
	p, err := startProducer(ctx, opts.Client, seeds, old, fc.addrs[old])
	if err != nil {
		return Round{}, err
	}
	stopped := false
	var st clientStats
	defer func() {
		if !stopped {
			p.stop()
		}
	}()
	time.Sleep(opts.InjectAfter)

	newLeader := fc.other(old)
	var failedAt time.Time
	known := time.Time{}
	firstErr := make(chan time.Time, 1)
	first := func(t time.Time) { firstErr <- t }
	switch opts.Scenario {
	case NotLeader, NotLeaderHint:
		if err := fc.c.MoveTopicPartition(Topic, 0, newLeader); err != nil {
			return Round{}, err
		}
		fc.notLeader(old, newLeader, fc.leaderEpoch+1, opts.Scenario == NotLeaderHint, first)
		failedAt = <-firstErr
		known = failedAt
	case Refused, RefusedLateElection:
		failedAt = time.Now()
		if err := fc.killListener(old); err != nil {
			return Round{}, err
		}
		if opts.Scenario == RefusedLateElection {
			time.Sleep(opts.ElectionDelay)
		}
		if err := fc.c.RemoveNode(old); err != nil {
			return Round{}, fmt.Errorf("remove node %d: %w", old, err)
		}
		known = time.Now()
		newLeader = fc.c.LeaderFor(Topic, 0)
	case LeaderNotAvailable:
		var elected atomic.Bool
		lna := make(chan struct{}, 1)
		fc.leaderNotAvailableWhile(func() bool { return !elected.Load() }, func() {
			select {
			case lna <- struct{}{}:
			default:
			}
		})
		fc.notLeader(old, newLeader, -1, false, first)
		failedAt = <-firstErr
		time.Sleep(time.Until(failedAt.Add(opts.Window)))
		// The election ends only once the client has been told
		// LEADER_NOT_AVAILABLE at least once after the failure, so the
		// round measures how long it waits before asking again.
		select {
		case <-lna:
		case <-time.After(60 * time.Second):
			return Round{}, errors.New("client sent no Metadata within 60s of the failure")
		}
		if err := fc.c.MoveTopicPartition(Topic, 0, newLeader); err != nil {
			return Round{}, err
		}
		known = time.Now()
		elected.Store(true)
	default:
		return Round{}, fmt.Errorf("unknown scenario %q", opts.Scenario)
	}
	at, ok := fc.waitProduceAt(newLeader, -1, failedAt, 60*time.Second)
	if !ok {
		return Round{}, fmt.Errorf("no produce reached the new leader %d within 60s", newLeader)
	}
	// Let the client run a little past recovery, so that late errors count.
	time.Sleep(300 * time.Millisecond)
	st = p.stop()
	stopped = true
	if st.failed != 0 {
		return Round{}, fmt.Errorf("%d records failed (client at defaults should retry through a failover)", st.failed)
	}

	r := Round{ToNewLeader: at.Sub(failedAt), AfterLeaderKnown: at.Sub(known), Acked: st.acked, Failed: st.failed, Version: st.version}
	var lastMeta, prevMeta time.Time
	for _, q := range fc.requests() {
		isMeta := q.key == kmsg.Metadata.Int16()
		if isMeta {
			r.MetadataVersion = q.version
		} else {
			r.ProduceVersion = q.version
		}
		switch {
		case !q.at.After(failedAt):
			if isMeta {
				lastMeta = q.at
			}
		case q.at.After(at):
		case isMeta:
			if r.Metadata == 0 {
				r.ToMetadata = q.at.Sub(failedAt)
			} else {
				r.MetadataGaps = append(r.MetadataGaps, q.at.Sub(prevMeta))
			}
			prevMeta = q.at
			r.Metadata++
		case q.node == old && q.ours:
			r.Retries++
		}
	}
	if !lastMeta.IsZero() {
		r.SinceMetadata = failedAt.Sub(lastMeta)
	}
	if r.Metadata == 0 {
		r.ToMetadata = -1 // none before the new leader was reached
	}
	if opts.Scenario == Refused || opts.Scenario == RefusedLateElection {
		r.Retries = int(st.refused)
	} else if r.Retries > 0 {
		r.Retries-- // the first error answer is not a retry
	}
	return r, nil
}
