package fetchsession

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestScenarios replays testdata/*.txt. Regenerate the expected output
// after a deliberate change with
// go test ./actors/fetchsession -run TestScenarios -rewrite.
//
// Commands:
//
//	config slots=N evict=MS ids=1,2,...: a new cache (ids from the list)
//	log T-P hw=H [lso=L] [start=S] [err=E]: set a simulated partition;
//	  a read at offset O returns records when O < lso (default hw)
//	fetch id=X epoch=E [replica=R] [now=MS] [parts=T-P@O,...]
//	  [forget=T-P,...]: NewContext, the reads, then Respond at the same
//	  time; prints the context and the response
//	sessions: the live sessions
func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		d := &scenario{logs: map[PartitionKey]PartitionResult{}}
		datadriven.RunTest(t, path, d.run)
	})
}

type scenario struct {
	c    *Cache
	logs map[PartitionKey]PartitionResult
}

func (d *scenario) run(t *testing.T, td *datadriven.TestData) string {
	switch td.Cmd {
	case "config":
		return d.config(t, td)
	case "log":
		return d.log(t, td)
	case "fetch":
		return d.fetch(t, td)
	case "sessions":
		return d.sessions()
	}
	t.Fatalf("%s: unknown command %q", td.Pos, td.Cmd)
	return ""
}

func (d *scenario) config(t *testing.T, td *datadriven.TestData) string {
	var slots int
	var evict int64
	var ids string
	td.ScanArgs(t, "slots", &slots)
	td.ScanArgs(t, "evict", &evict)
	td.ScanArgs(t, "ids", &ids)
	var list []int32
	for _, s := range strings.Split(ids, ",") {
		list = append(list, int32(atoi(t, s)))
	}
	c, err := NewCache(Config{MaxSlots: slots, MinEvictionMs: evict}, seqIDs(list...))
	if err != nil {
		return err.Error()
	}
	d.c = c
	return "ok"
}

func (d *scenario) log(t *testing.T, td *datadriven.TestData) string {
	k := parseKey(t, td.CmdArgs[0].Key)
	var hw int64
	td.ScanArgs(t, "hw", &hw)
	lso, start, code := hw, int64(0), 0
	if td.HasArg("lso") {
		td.ScanArgs(t, "lso", &lso)
	}
	if td.HasArg("start") {
		td.ScanArgs(t, "start", &start)
	}
	if td.HasArg("err") {
		td.ScanArgs(t, "err", &code)
	}
	d.logs[k] = PartitionResult{Topic: k.Topic, Partition: k.Partition, ErrorCode: int16(code),
		HighWatermark: hw, LastStableOffset: lso, LogStartOffset: start, PreferredReadReplica: -1}
	return "ok"
}

func (d *scenario) fetch(t *testing.T, td *datadriven.TestData) string {
	req := Request{ReplicaID: -1}
	var id, epoch int
	td.ScanArgs(t, "id", &id)
	td.ScanArgs(t, "epoch", &epoch)
	req.SessionID, req.SessionEpoch = int32(id), int32(epoch)
	if td.HasArg("replica") {
		var r int
		td.ScanArgs(t, "replica", &r)
		req.ReplicaID = int32(r)
	}
	if td.HasArg("now") {
		td.ScanArgs(t, "now", &req.NowMs)
	}
	if td.HasArg("parts") {
		var s string
		td.ScanArgs(t, "parts", &s)
		for _, p := range strings.Split(s, ",") {
			key, off, _ := strings.Cut(p, "@")
			k := parseKey(t, key)
			req.Partitions = append(req.Partitions, fp(k.Topic, k.Partition, int64(atoi(t, off))))
		}
	}
	if td.HasArg("forget") {
		var s string
		td.ScanArgs(t, "forget", &s)
		for _, p := range strings.Split(s, ",") {
			req.Forgotten = append(req.Forgotten, parseKey(t, p))
		}
	}
	ctx := d.c.NewContext(&req)
	var b strings.Builder
	fmt.Fprintf(&b, "context: %v", ctx.Kind)
	if ctx.ErrorCode != 0 {
		fmt.Fprintf(&b, " error=%d", ctx.ErrorCode)
	}
	for _, p := range ctx.Reads {
		fmt.Fprintf(&b, " %s-%d@%d", p.Topic, p.Partition, p.FetchOffset)
	}
	resp, err := d.c.Respond(ctx, req.NowMs, d.read(ctx.Reads))
	if err != nil {
		return err.Error()
	}
	fmt.Fprintf(&b, "\nresponse: id=%d error=%d", resp.SessionID, resp.ErrorCode)
	for _, r := range resp.Partitions {
		fmt.Fprintf(&b, "\n  %s-%d hw=%d lso=%d start=%d err=%d records=%d",
			r.Topic, r.Partition, r.HighWatermark, r.LastStableOffset, r.LogStartOffset, r.ErrorCode, len(r.Records))
	}
	return b.String()
}

// read simulates the partition actors: records are the bytes between the
// fetch offset and the last stable offset, one byte per offset.
func (d *scenario) read(reads []FetchPartition) []PartitionResult {
	out := make([]PartitionResult, 0, len(reads))
	for _, p := range reads {
		r, ok := d.logs[p.Key()]
		if !ok {
			r = PartitionResult{Topic: p.Topic, Partition: p.Partition, ErrorCode: 3, HighWatermark: -1,
				LastStableOffset: -1, LogStartOffset: -1, PreferredReadReplica: -1}
		}
		r.Records = []byte{}
		if r.ErrorCode == 0 && p.FetchOffset < r.LastStableOffset {
			r.Records = make([]byte, r.LastStableOffset-p.FetchOffset)
		}
		out = append(out, r)
	}
	return out
}

func (d *scenario) sessions() string {
	ids := make([]int, 0, d.c.Len())
	for id := range d.c.sessions {
		ids = append(ids, int(id))
	}
	sort.Ints(ids)
	if len(ids) == 0 {
		return "none"
	}
	var b strings.Builder
	for i, id := range ids {
		s, _ := d.c.Session(int32(id))
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "id=%d epoch=%d privileged=%v created=%d used=%d parts=%s",
			s.ID(), s.Epoch(), s.Privileged(), s.CreatedMs(), s.LastUsedMs(), readKeys(s.Partitions()))
	}
	return b.String()
}

func parseKey(t *testing.T, s string) PartitionKey {
	i := strings.LastIndexByte(s, '-')
	if i < 0 {
		t.Fatalf("bad partition %q", s)
	}
	return PartitionKey{Topic: s[:i], Partition: int32(atoi(t, s[i+1:]))}
}

func atoi(t *testing.T, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
