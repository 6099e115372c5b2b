package sim

import (
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/actors/partition"
	"github.com/weirmq/weir/actors/replicafetcher"
)

// fetcherShell is a replica fetcher actor's shell (actors/replicafetcher's
// fetcher.go) around the real replicafetcher.State: its Commands go to
// the follower replicas' mailboxes, its Fetch to the leader node over the
// network (failing after the request timeout when no answer comes, or at
// once when the leader's process dies), and it ticks at WakeAtMs.
type fetcherShell struct {
	n      *node
	leader int32
	st     *replicafetcher.State
	wakeAt int64
	// inflight is the id of the Fetch in flight, 0 if none.
	inflight uint64
}

// fetchCommand is one State command on its way to a replica.
type fetchCommand struct {
	replicafetcher.Command
	from *fetcherShell
}

// id is the command's id, echoed in its ReplicaPosition.
func (c *fetchCommand) id() uint64 {
	switch {
	case c.Append != nil:
		return c.Append.ID
	case c.Truncate != nil:
		return c.Truncate.ID
	case c.Reset != nil:
		return c.Reset.ID
	}
	return 0
}

var (
	quietLogger     = slog.New(slog.NewTextHandler(io.Discard, nil))
	errFetchTimeout = errors.New("sim: fetch timed out or its connection reset")
)

func newFetcherShell(n *node, leader int32) *fetcherShell {
	cfg := n.w.cfg
	st := replicafetcher.NewState(replicafetcher.Config{
		NodeID: n.id, Leader: leader, MaxWaitMs: int32(cfg.FetchWaitMs), BackoffMs: int32(cfg.FetchBackoffMs),
		PartitionMaxBytes: cfg.FetchMaxBytes, MaxBytes: 4 * cfg.FetchMaxBytes,
		RequestTimeout: time.Duration(cfg.FetchTimeoutMs) * time.Millisecond, Logger: quietLogger,
	})
	return &fetcherShell{n: n, leader: leader, st: st}
}

// handle performs one step's Output.
func (f *fetcherShell) handle(out replicafetcher.Output) {
	n := f.n
	for _, c := range out.Commands {
		s := n.byClient[c.Replica]
		if s == nil {
			n.w.fail("fetcher command for an unknown replica")
			return
		}
		cmd := &fetchCommand{Command: c, from: f}
		n.post(func() { s.onCommand(cmd) })
	}
	if out.Fetch != nil {
		f.send(out.Fetch)
	}
	f.wakeAt = out.WakeAtMs
}

// send sends a Fetch to the leader node.
func (f *fetcherShell) send(fr *replicafetcher.FetchRequest) {
	n := f.n
	w := n.w
	id := fr.ID
	f.inflight = id
	parts := 0
	for _, t := range fr.Request.Topics {
		parts += len(t.Partitions)
	}
	w.trace("fetch", n.id, int64(f.leader), int64(id), int64(parts))
	leader := w.nodes[f.leader]
	from, inc := n.id, n.inc
	w.net.send(n.id, f.leader, 0, func() {
		leader.serveFetch(from, fr.Request, func(resp *kmsg.FetchResponse) {
			w.net.send(leader.id, from, inc, func() { f.onFetchResponse(id, resp) })
		})
	})
	w.after(w.cfg.FetchTimeoutMs, n.id, func() {
		if f.inflight == id {
			f.onFetchError(id)
		}
	})
}

func (f *fetcherShell) onFetchResponse(id uint64, resp *kmsg.FetchResponse) {
	if f.inflight == id {
		f.inflight = 0
	}
	f.handle(f.st.OnFetchResponse(id, resp, f.n.w.now))
}

func (f *fetcherShell) onFetchError(id uint64) {
	if f.inflight != id {
		return
	}
	f.inflight = 0
	f.n.w.trace("fetch-error", f.n.id, int64(f.leader), int64(id), 0)
	f.handle(f.st.OnFetchError(id, errFetchTimeout, f.n.w.now))
}

func (f *fetcherShell) onPosition(p *partition.ReplicaPosition) {
	f.handle(f.st.OnPosition(p, f.n.w.now))
}

func (f *fetcherShell) onTick() { f.handle(f.st.OnTick(f.n.w.now)) }

// follow has s's partition fetched from leader at leaderEpoch, and from no
// other leader (cluster/fetchers.go's follow). The Follow reaches the
// fetcher after the BecomeFollower the reconciler sent first.
func (n *node) follow(s *replicaShell, leader, leaderEpoch int32) {
	part := s.part
	if old := n.following[part]; old != 0 && old != leader {
		n.unfollow(part)
	}
	f := n.fetchers[leader]
	if f == nil {
		f = newFetcherShell(n, leader)
		n.fetchers[leader] = f
	}
	n.following[part] = leader
	item := replicafetcher.FollowItem{Followed: replicafetcher.Followed{
		TopicID: n.topicID, Topic: topicName, Partition: part, LeaderEpoch: leaderEpoch, Replica: s.client,
	}}
	n.w.trace("follow", n.id, int64(part), int64(leader), int64(leaderEpoch))
	n.post(func() {
		item.Status = s.r.Status()
		f.handle(f.st.Follow([]replicafetcher.FollowItem{item}, n.w.now))
	})
}

// unfollow stops fetching the partition.
func (n *node) unfollow(part int32) {
	old := n.following[part]
	if old == 0 {
		return
	}
	n.following[part] = 0
	f := n.fetchers[old]
	ref := replicafetcher.PartitionRef{TopicID: n.topicID, Partition: part}
	n.post(func() { f.handle(f.st.Unfollow([]replicafetcher.PartitionRef{ref}, n.w.now)) })
}

// fetchTarget is one partition of a replica fetch being served.
type fetchTarget struct {
	topic    string
	part     int32
	s        *replicaShell
	code     int16
	diverged bool
	divEpoch int32
	divEnd   int64
	req      kmsg.FetchRequestTopicPartition
}

// parkedFetch is a long-polled replica fetch.
type parkedFetch struct {
	targets  []fetchTarget
	deadline int64
	reply    func(*kmsg.FetchResponse)
}

// serveFetch serves a follower's Fetch as wire/01_fetch_replica.go does:
// each partition must be led here at the follower's epoch and the
// follower be one of its replicas; a last fetched epoch that diverges
// from this log is answered with the diverging epoch; otherwise records
// are read up to the log end, and the first read reports the follower's
// position to the leader replica. A fetch that found nothing waits for
// the log end to pass a fetch offset, or MaxWaitMillis.
func (n *node) serveFetch(from int32, r *kmsg.FetchRequest, reply func(*kmsg.FetchResponse)) {
	w := n.w
	var ts []fetchTarget
	for _, t := range r.Topics {
		for _, rp := range t.Partitions {
			tg := fetchTarget{topic: t.Topic, part: rp.Partition, req: rp}
			switch {
			case t.Topic != topicName || n.replicas == nil || int(rp.Partition) >= len(n.replicas):
				tg.code = kerr.UnknownTopicOrPartition.Code
			default:
				tg.s = n.replicas[rp.Partition]
				if p, _ := n.img.Partition(n.topicID, rp.Partition); !p.IsReplica(from) {
					tg.code = kerr.NotLeaderForPartition.Code
				}
			}
			if tg.code == 0 {
				st := tg.s.r.Status()
				tg.code = leaderFencing(&st, rp.CurrentLeaderEpoch)
				if tg.code == 0 && rp.LastFetchedEpoch >= 0 {
					tg.divEpoch, tg.divEnd, tg.diverged = tg.s.log.divergingEpoch(st.LeaderEpoch, rp.LastFetchedEpoch, rp.FetchOffset)
				}
			}
			ts = append(ts, tg)
		}
	}
	resp, bytes, failed := n.readFetch(ts, r)
	for i, tg := range ts {
		w.trace("serve-fetch", n.id, int64(from)*100+int64(tg.part), tg.req.FetchOffset, int64(resp[i].ErrorCode)*10000+int64(len(resp[i].RecordBatches)))
		if tg.code == 0 && !tg.diverged && resp[i].ErrorCode == 0 {
			s := tg.s
			m := &partition.FollowerFetched{ReplicaID: from, BrokerEpoch: -1, FetchOffset: tg.req.FetchOffset,
				LastFetchedEpoch: tg.req.LastFetchedEpoch, NowMs: w.now}
			n.post(func() { s.onFollowerFetched(m) })
		}
	}
	if r.MaxWaitMillis <= 0 || len(ts) == 0 || bytes >= int(max(r.MinBytes, 1)) || failed {
		reply(fillFetch(ts, resp))
		return
	}
	pf := &parkedFetch{targets: ts, deadline: w.now + int64(r.MaxWaitMillis), reply: reply}
	n.parkedFetches = append(n.parkedFetches, pf)
	w.at(pf.deadline, n.id, func() {})
}

// leaderFencing is wire's: FENCED_LEADER_EPOCH for an older epoch,
// UNKNOWN_LEADER_EPOCH for a newer one (-1: no check), then
// NOT_LEADER_OR_FOLLOWER unless the replica leads.
func leaderFencing(st *partition.Status, epoch int32) int16 {
	switch {
	case epoch != -1 && epoch < st.LeaderEpoch:
		return kerr.FencedLeaderEpoch.Code
	case epoch != -1 && epoch > st.LeaderEpoch:
		return kerr.UnknownLeaderEpoch.Code
	case st.Role != partition.Leader:
		return kerr.NotLeaderForPartition.Code
	}
	return 0
}

// readFetch reads every target once (readAll), with the replica read's
// checks (the leader epoch, the range), up to the log end.
func (n *node) readFetch(ts []fetchTarget, r *kmsg.FetchRequest) ([]kmsg.FetchResponseTopicPartition, int, bool) {
	out := make([]kmsg.FetchResponseTopicPartition, len(ts))
	total, failed := 0, false
	for i, tg := range ts {
		rp := kmsg.NewFetchResponseTopicPartition()
		rp.Partition, rp.ErrorCode = tg.part, tg.code
		rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = -1, -1, -1
		rp.RecordBatches = []byte{}
		if tg.s != nil && (tg.code == 0 || tg.diverged) {
			st := tg.s.r.Status()
			rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = st.HighWatermark, st.HighWatermark, st.LogStartOffset
			if tg.diverged {
				rp.DivergingEpoch.Epoch, rp.DivergingEpoch.EndOffset = tg.divEpoch, tg.divEnd
			} else if code := leaderFencing(&st, tg.req.CurrentLeaderEpoch); code != 0 {
				rp.ErrorCode = code
			} else if data, err := tg.s.log.read(tg.req.FetchOffset, int(tg.req.PartitionMaxBytes)); err != nil {
				rp.ErrorCode = kerr.OffsetOutOfRange.Code
			} else {
				rp.RecordBatches = data
				total += len(data)
			}
		}
		failed = failed || rp.ErrorCode != 0 || tg.diverged
		out[i] = rp
	}
	return out, total, failed
}

// fillFetch builds the response.
func fillFetch(ts []fetchTarget, parts []kmsg.FetchResponseTopicPartition) *kmsg.FetchResponse {
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = replicafetcher.FetchVersion
	for i, p := range parts {
		if k := len(resp.Topics); k == 0 || resp.Topics[k-1].Topic != ts[i].topic {
			t := kmsg.NewFetchResponseTopic()
			t.Topic = ts[i].topic
			resp.Topics = append(resp.Topics, t)
		}
		t := &resp.Topics[len(resp.Topics)-1]
		t.Partitions = append(t.Partitions, p)
	}
	return resp
}

// wakeFetches answers the parked fetches whose data came or whose time is
// up.
func (n *node) wakeFetches() {
	if len(n.parkedFetches) == 0 {
		return
	}
	kept := n.parkedFetches[:0]
	for _, pf := range n.parkedFetches {
		ready := n.w.now >= pf.deadline
		for _, tg := range pf.targets {
			if tg.s != nil && tg.s.log.leo > tg.req.FetchOffset {
				ready = true
			}
		}
		if !ready {
			kept = append(kept, pf)
			continue
		}
		parts, _, _ := n.readFetch(pf.targets, nil)
		pf.reply(fillFetch(pf.targets, parts))
	}
	n.parkedFetches = kept
}
