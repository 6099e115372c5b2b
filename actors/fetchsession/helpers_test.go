package fetchsession

import (
	"fmt"
	"testing"
)

// seqIDs returns the ids in order, then 0 forever.
func seqIDs(ids ...int32) IDSource {
	i := 0
	return func() int32 {
		if i >= len(ids) {
			return 0
		}
		i++
		return ids[i-1]
	}
}

func newTestCache(t *testing.T, cfg Config, ids ...int32) *Cache {
	t.Helper()
	c, err := NewCache(cfg, seqIDs(ids...))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func fp(topic string, part int32, off int64) FetchPartition {
	return FetchPartition{Topic: topic, Partition: part, FetchOffset: off, LogStartOffset: -1,
		PartitionMaxBytes: 1 << 20, CurrentLeaderEpoch: -1, LastFetchedEpoch: -1}
}

func res(topic string, part int32, hw int64, records string) PartitionResult {
	r := PartitionResult{Topic: topic, Partition: part, HighWatermark: hw, LastStableOffset: hw,
		PreferredReadReplica: -1, Records: []byte(records)}
	return r
}

// fullResults gives every read the same high watermark and no records.
func fullResults(ctx *Context, hw int64) []PartitionResult {
	out := make([]PartitionResult, 0, len(ctx.Reads))
	for _, p := range ctx.Reads {
		out = append(out, res(p.Topic, p.Partition, hw, ""))
	}
	return out
}

func keys(rs []PartitionResult) string {
	s := ""
	for i, r := range rs {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%s-%d", r.Topic, r.Partition)
	}
	return s
}

// open creates a session with parts at nowMs and returns its id.
func open(t *testing.T, c *Cache, replica int32, nowMs int64, parts ...FetchPartition) int32 {
	t.Helper()
	ctx := c.NewContext(&Request{SessionID: 0, SessionEpoch: 0, ReplicaID: replica, Partitions: parts, NowMs: nowMs})
	resp, err := c.Respond(ctx, nowMs, fullResults(ctx, 0))
	if err != nil {
		t.Fatal(err)
	}
	return resp.SessionID
}
