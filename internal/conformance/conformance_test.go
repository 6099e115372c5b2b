package conformance

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirmq/weir/internal/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }

// Record counts per variant (see doc.go).
const (
	fullRecords  = 10000 // acks variants
	codecRecords = 10000 // compressed variants; lower it first if CI is slow
	shortRecords = 500   // every variant under -short
)

// partitions is the partition count of every topic the suite creates.
const partitions = 3

// opTimeout bounds one client operation (create, produce or consume of one
// variant); it only guards against hangs.
const opTimeout = 3 * time.Minute

// variant is one produce configuration of a client.
type variant struct {
	name  string // part of the topic name and the subtest name
	acks  string // "0", "1", "all", or "" for the client's default
	codec string // "gzip", "snappy", "lz4", "zstd", or "" for the client's default
}

// records returns how many records the variant produces.
func (v variant) records() int {
	switch {
	case testing.Short():
		return shortRecords
	case v.codec != "":
		return codecRecords
	default:
		return fullRecords
	}
}

// acksVariants returns the variants acks=1 and acks=all.
func acksVariants() []variant {
	return []variant{{name: "acks1", acks: "1"}, {name: "acksall", acks: "all"}}
}

// codecVariants returns one variant per codec, at the client's default acks.
func codecVariants(codecs ...string) []variant {
	vs := make([]variant, 0, len(codecs))
	for _, c := range codecs {
		vs = append(vs, variant{name: c, codec: c})
	}
	return vs
}

// allCodecs lists the codecs Kafka defines besides none.
var allCodecs = []string{"gzip", "snappy", "lz4", "zstd"}

// driver adapts one client library to the suite.
type driver struct {
	name     string
	variants []variant
	// defaultAcks is the client's acks when a variant leaves it unset, if
	// that is "0": Kafka promises no order among unacknowledged requests,
	// which a client may send on several connections (kafka-go does), so
	// the produce order within a partition is not checked for them.
	defaultAcks string
	// available returns nil when the client can run here; see needClient.
	available func() error
	// createTopic creates topic with n partitions and replication factor 1.
	createTopic func(ctx context.Context, addr, topic string, n int32) error
	// produce sends recs in order and returns, per record, where the client
	// reported it acknowledged (Partition and Offset), or nil when the
	// client does not report it.
	produce func(ctx context.Context, addr, topic string, v variant, recs []record) ([]location, error)
	// consume reads partitions 0..n-1 of topic from their first offset up
	// to their high watermark and returns the records in the order each
	// partition delivered them.
	consume func(ctx context.Context, addr, topic string, n int32) ([]record, error)
	// staticHeaders, when non-nil, are the headers of every record: the
	// client cannot set headers per record (kcat).
	staticHeaders []header
	// clientTimestamps is set when the client cannot set timestamps and
	// stamps records itself at produce time (kcat).
	clientTimestamps bool
}

// produced is what one variant wrote, kept to check it again after the
// broker restarts.
type produced struct {
	v     variant
	topic string
	want  []record
	// tsLo and tsHi bound client-set timestamps (clientTimestamps).
	tsLo, tsHi int64
}

// runSuite runs the scenario of doc.go with d.
func runSuite(t *testing.T, d driver) {
	if d.available != nil {
		needClient(t, d.name, d.available())
	}
	b := startBroker(t)
	t.Logf("%s against %s at %s", d.name, b.Kind(), b.Addr())
	var done []produced
	for _, v := range d.variants {
		var p produced
		t.Run(v.name, func(t *testing.T) { produceAndCheck(t, b.Addr(), d, v, &p) })
		if p.topic != "" { // produced, whatever the checks found
			done = append(done, p)
		}
	}
	if len(done) == 0 {
		t.Fatal("no variant succeeded; nothing to check after a restart")
	}
	b.Restart(t)
	for _, p := range done {
		t.Run("restarted/"+p.v.name, func(t *testing.T) { consumeAndCheck(t, b.Addr(), d, p) })
	}
}

// produceAndCheck creates the variant's topic, produces, consumes and
// checks. Once the records are produced it fills p with them (p.topic set),
// with the locations consumed, which the checks after the restart expect
// again; p is filled even when the test stops on a failure.
func produceAndCheck(t *testing.T, addr string, d driver, v variant, p *produced) {
	topic := topicName(d.name, v.name)
	n := v.records()
	if v.acks == "" {
		t.Logf("%d records, client default acks, codec %s", n, orDefault(v.codec))
	} else {
		t.Logf("%d records, acks=%s, codec %s", n, v.acks, orDefault(v.codec))
	}
	*p = produced{v: v, want: makeRecords(n, d)}

	ctx, cancel := context.WithTimeout(t.Context(), opTimeout)
	defer cancel()
	if err := d.createTopic(ctx, addr, topic, partitions); err != nil {
		t.Fatalf("%s: create topic %s: %v", d.name, topic, err)
	}
	p.tsLo = time.Now().UnixMilli()
	locs, err := d.produce(ctx, addr, topic, v, p.want)
	p.tsHi = time.Now().UnixMilli()
	if err != nil {
		t.Fatalf("%s: produce %d records to %s: %v", d.name, n, topic, err)
	}
	if locs != nil {
		if len(locs) != n {
			t.Fatalf("%s: produce reported %d acknowledgements for %d records", d.name, len(locs), n)
		}
		for i := range p.want {
			p.want[i].Partition, p.want[i].Offset = locs[i].Partition, locs[i].Offset
		}
	}
	p.topic = topic
	if err := waitForEnd(ctx, addr, topic, int64(n)); err != nil {
		t.Fatalf("%s: %v", d.name, err)
	}
	got := consumeAndCheck(t, addr, d, *p)
	// After the restart the records must be exactly where they were.
	byKey := make(map[string]record, len(got))
	for _, r := range got {
		byKey[string(r.Key)] = r
	}
	for i, w := range p.want {
		if r, ok := byKey[string(w.Key)]; ok {
			p.want[i].Partition, p.want[i].Offset = r.Partition, r.Offset
		}
	}
}

// consumeAndCheck consumes p's topic with d, checks the records against
// p.want and the stored batches, and returns the records consumed.
func consumeAndCheck(t *testing.T, addr string, d driver, p produced) []record {
	ctx, cancel := context.WithTimeout(t.Context(), opTimeout)
	defer cancel()
	got, err := d.consume(ctx, addr, p.topic, partitions)
	if err != nil {
		t.Fatalf("%s: consume %s: %v", d.name, p.topic, err)
	}
	acks := p.v.acks
	if acks == "" {
		acks = d.defaultAcks
	}
	opts := checkOptions{partitions: partitions, tsLo: -1, tsHi: -1, unordered: acks == "0"}
	if d.clientTimestamps {
		opts.tsLo, opts.tsHi = p.tsLo, p.tsHi
	}
	reportProblems(t, fmt.Sprintf("%s %s: consumed records", d.name, p.topic), checkRecords(p.want, got, opts))
	batches, err := fetchBatches(ctx, addr, p.topic, partitions)
	if err != nil {
		t.Fatalf("raw fetch of %s: %v", p.topic, err)
	}
	reportProblems(t, fmt.Sprintf("%s %s: stored batches", d.name, p.topic), checkBatches(batches, p.v.codec, partitions))
	t.Logf("consumed %d records; stored: %s", len(got), summarizeBatches(batches))
	return got
}

// topicName is the topic of one client's variant.
func topicName(client, variant string) string {
	return "conformance-" + client + "-" + variant
}

func orDefault(s string) string {
	if s == "" {
		return "default"
	}
	return s
}

// needClient skips the test when err reports the client missing, or fails
// it under WEIR_REQUIRE_CLIENTS=1 (harness.NeedClient).
func needClient(t *testing.T, name string, err error) {
	t.Helper()
	harness.NeedClient(t, name, err)
}

// makeRecords builds n distinct records: unique keys in produce order,
// compressible values of varied length, two headers and timestamps one
// millisecond apart from ten minutes ago (or what d can express).
func makeRecords(n int, d driver) []record {
	base := time.Now().Add(-10 * time.Minute).UnixMilli()
	recs := make([]record, n)
	for i := range recs {
		r := record{
			Partition: -1,
			Offset:    -1,
			Key:       []byte(fmt.Sprintf("key-%06d", i)),
			Value:     makeValue(i),
			Timestamp: base + int64(i),
		}
		if d.staticHeaders != nil {
			r.Headers = d.staticHeaders
		} else {
			r.Headers = []header{
				{Key: "seq", Value: []byte(strconv.Itoa(i))},
				{Key: "origin", Value: []byte("weir-conformance")},
			}
		}
		if d.clientTimestamps {
			r.Timestamp = -1
		}
		recs[i] = r
	}
	return recs
}

// makeValue returns record i's value: its index, then 20 to 319 bytes of
// text. No tab, newline or colon, so line-based tools carry it unchanged.
func makeValue(i int) []byte {
	const filler = "the quick brown fox jumps over the lazy dog "
	n := 20 + (i*37)%300
	var b strings.Builder
	fmt.Fprintf(&b, "value-%06d ", i)
	for b.Len() < n {
		b.WriteString(filler)
	}
	return []byte(b.String()[:n])
}

// kadmCreateTopic creates a topic with kadm, for clients without an admin API.
func kadmCreateTopic(ctx context.Context, addr, topic string, n int32) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return fmt.Errorf("kgo client: %w", err)
	}
	defer cl.Close()
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, n, 1, nil, topic)
	if err != nil {
		return fmt.Errorf("kadm create topic: %w", err)
	}
	return resp.Err
}

// waitForEnd waits until topic's high watermarks add up to at least n: an
// acks=0 producer returns before the broker appended everything. It polls
// ListOffsets; every other variant passes on the first look.
func waitForEnd(ctx context.Context, addr, topic string, n int64) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return fmt.Errorf("kgo client: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var total int64
	for {
		ends, err := adm.ListEndOffsets(ctx, topic)
		if err == nil {
			err = ends.Error()
		}
		if err == nil {
			total = 0
			ends.Each(func(o kadm.ListedOffset) { total += o.Offset })
			if total >= n {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("high watermarks of %s add up to %d, want %d (last error: %v): %w", topic, total, n, err, ctx.Err())
		case <-tick.C:
		}
	}
}
