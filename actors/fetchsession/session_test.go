package fetchsession

import "testing"

// incr runs one incremental fetch in session id with the given results
// (by key; missing ones get hw with no records) and returns the response.
func incr(t *testing.T, c *Cache, id int32, added []FetchPartition, forgotten []PartitionKey, hw int64, rs ...PartitionResult) (*Context, Response) {
	t.Helper()
	s, _ := c.Session(id)
	ctx := c.NewContext(&Request{SessionID: id, SessionEpoch: s.Epoch(), ReplicaID: -1, Partitions: added, Forgotten: forgotten})
	if ctx.Kind != KindIncremental {
		t.Fatalf("kind %v code %d", ctx.Kind, ctx.ErrorCode)
	}
	got := map[PartitionKey]PartitionResult{}
	for _, r := range rs {
		got[r.Key()] = r
	}
	results := fullResults(ctx, hw)
	for i, r := range results {
		if o, ok := got[r.Key()]; ok {
			results[i] = o
		}
	}
	resp, err := c.Respond(ctx, 0, results)
	if err != nil {
		t.Fatal(err)
	}
	return ctx, resp
}

func readKeys(ps []FetchPartition) string {
	rs := make([]PartitionResult, len(ps))
	for i, p := range ps {
		rs[i] = PartitionResult{Topic: p.Topic, Partition: p.Partition}
	}
	return keys(rs)
}

func TestIncrementalAddUpdateForget(t *testing.T) {
	c := newTestCache(t, DefaultConfig(), 1)
	id := open(t, c, -1, 0, fp("a", 0, 10), fp("a", 1, 20))
	s, _ := c.Session(id)

	// Add b-0, update a-1's offset, forget nothing.
	up := fp("a", 1, 25)
	up.PartitionMaxBytes = 100
	ctx, resp := incr(t, c, id, []FetchPartition{fp("b", 0, 0), up}, nil, 0)
	if got := readKeys(ctx.Reads); got != "a-0 a-1 b-0" {
		t.Fatalf("reads %q", got)
	}
	if ctx.Reads[1].FetchOffset != 25 || ctx.Reads[1].PartitionMaxBytes != 100 {
		t.Fatalf("a-1 not updated: %+v", ctx.Reads[1])
	}
	// Only the new partition is sent: a-0 and a-1 are unchanged (hw 0).
	if got := keys(resp.Partitions); got != "b-0" {
		t.Fatalf("response %q, want b-0", got)
	}

	// Forget a-0; a partition both added and forgotten is removed.
	ctx, _ = incr(t, c, id, []FetchPartition{fp("c", 0, 0)}, []PartitionKey{{"a", 0}, {"c", 0}, {"zz", 9}}, 0)
	if got := readKeys(ctx.Reads); got != "a-1 b-0" {
		t.Fatalf("reads after forget %q", got)
	}
	if s.Len() != 2 {
		t.Fatalf("session len %d", s.Len())
	}
}

func TestResponseInclusion(t *testing.T) {
	tests := []struct {
		name string
		r    PartitionResult
		want bool
	}{
		{"unchanged", res("a", 0, 0, ""), false},
		{"records", res("a", 0, 0, "x"), true},
		{"hw changed", res("a", 0, 5, ""), true},
		{"lso changed", PartitionResult{Topic: "a", HighWatermark: 0, LastStableOffset: 3, PreferredReadReplica: -1}, true},
		{"log start changed", PartitionResult{Topic: "a", LogStartOffset: 2, PreferredReadReplica: -1}, true},
		{"error", PartitionResult{Topic: "a", ErrorCode: 6, PreferredReadReplica: -1}, true},
		{"preferred replica", PartitionResult{Topic: "a", PreferredReadReplica: 2}, true},
		{"diverging epoch", PartitionResult{Topic: "a", PreferredReadReplica: -1, DivergingEpoch: true}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestCache(t, DefaultConfig(), 1)
			id := open(t, c, -1, 0, fp("a", 0, 0), fp("b", 0, 0))
			_, resp := incr(t, c, id, nil, nil, 0, tt.r)
			if got := len(resp.Partitions) == 1 && resp.Partitions[0].Topic == "a"; got != tt.want {
				t.Fatalf("included %q, want a-0 included = %v", keys(resp.Partitions), tt.want)
			}
			if len(resp.Partitions) > 1 {
				t.Fatalf("unchanged b-0 sent: %q", keys(resp.Partitions))
			}
		})
	}
}

func TestUnchangedIncludedInFullResponses(t *testing.T) {
	c := newTestCache(t, DefaultConfig(), 1, 2)
	parts := []FetchPartition{fp("a", 0, 0), fp("b", 0, 0)}
	for _, req := range []Request{{SessionID: 0, SessionEpoch: -1}, {SessionID: 0, SessionEpoch: 0}} {
		req.Partitions = parts
		ctx := c.NewContext(&req)
		resp, err := c.Respond(ctx, 0, fullResults(ctx, 0))
		if err != nil {
			t.Fatal(err)
		}
		if got := keys(resp.Partitions); got != "a-0 b-0" {
			t.Fatalf("(%d,%d): full response %q", req.SessionID, req.SessionEpoch, got)
		}
	}
}

func TestErrorResentAfterItClears(t *testing.T) {
	c := newTestCache(t, DefaultConfig(), 1)
	id := open(t, c, -1, 0, fp("a", 0, 0))
	_, resp := incr(t, c, id, nil, nil, 0, PartitionResult{Topic: "a", ErrorCode: 6, PreferredReadReplica: -1})
	if len(resp.Partitions) != 1 {
		t.Fatal("error not sent")
	}
	// The error clears with the same hw as before: still sent once.
	if _, resp = incr(t, c, id, nil, nil, 0); len(resp.Partitions) != 1 {
		t.Fatal("partition not re-sent after the error cleared")
	}
	if _, resp = incr(t, c, id, nil, nil, 0); len(resp.Partitions) != 0 {
		t.Fatalf("unchanged partition sent: %q", keys(resp.Partitions))
	}
}

func TestPartitionsWithDataMoveToEnd(t *testing.T) {
	c := newTestCache(t, DefaultConfig(), 1)
	id := open(t, c, -1, 0, fp("a", 0, 0), fp("a", 1, 0), fp("a", 2, 0))
	_, resp := incr(t, c, id, nil, nil, 0, res("a", 0, 0, "x"))
	if got := keys(resp.Partitions); got != "a-0" {
		t.Fatalf("response %q", got)
	}
	ctx, _ := incr(t, c, id, nil, nil, 0)
	if got := readKeys(ctx.Reads); got != "a-1 a-2 a-0" {
		t.Fatalf("order %q, want a-1 a-2 a-0", got)
	}
}
