package fetchsession_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/weirmq/weir/actors/fetchsession"
)

// The fetch session actor's loop for two requests of one consumer: a
// full fetch that creates a session, then an incremental one in which
// nothing changed.
func Example() {
	c, err := fetchsession.NewCache(fetchsession.DefaultConfig(), fetchsession.RandomIDs(rand.New(rand.NewPCG(1, 1))))
	if err != nil {
		panic(err)
	}
	read := func(ctx *fetchsession.Context) []fetchsession.PartitionResult {
		var out []fetchsession.PartitionResult
		for _, p := range ctx.Reads { // in the broker: one read per partition actor
			out = append(out, fetchsession.PartitionResult{Topic: p.Topic, Partition: p.Partition,
				HighWatermark: 10, LastStableOffset: 10, PreferredReadReplica: -1, Records: []byte{}})
		}
		return out
	}
	ctx := c.NewContext(&fetchsession.Request{SessionID: 0, SessionEpoch: 0, ReplicaID: -1,
		Partitions: []fetchsession.FetchPartition{{Topic: "t", Partition: 0, FetchOffset: 10, LogStartOffset: -1,
			PartitionMaxBytes: 1 << 20, CurrentLeaderEpoch: -1, LastFetchedEpoch: -1}}})
	resp, _ := c.Respond(ctx, 0, read(ctx))
	fmt.Println(ctx.Kind, resp.SessionID != 0, len(resp.Partitions))

	ctx = c.NewContext(&fetchsession.Request{SessionID: resp.SessionID, SessionEpoch: 1, ReplicaID: -1, NowMs: 500})
	resp, _ = c.Respond(ctx, 500, read(ctx))
	fmt.Println(ctx.Kind, len(ctx.Reads), len(resp.Partitions))
	// Output:
	// full true 1
	// incremental 1 0
}
