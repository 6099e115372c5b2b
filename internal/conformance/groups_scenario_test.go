package conformance

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirmq/weir/internal/harness"
)

// The consumer group scenario, run with every client (see
// runGroupScenario):
//
//  1. Churn: three consumers of one group share a topic of
//     groupPartitions partitions while records are produced in four
//     chunks; between chunks one member leaves, a new one joins, another
//     leaves and a fifth joins (a restarted consumer is a new member to
//     the group). Every record must be delivered; a client that commits
//     synchronously after each record may deliver none twice. When the
//     members have stopped, the committed offsets must equal the log end
//     offsets.
//  2. The broker restarts; the committed offsets must be unchanged.
//  3. Resume: with no consumer running, more records are produced; a
//     consumer with auto.offset.reset=latest starts and must deliver
//     exactly those (resuming from the committed offsets, not the log
//     end); then the same with auto.offset.reset=earliest (not the log
//     start).
//
// The kill test (TestGroupKilledConsumer) covers a member that dies
// without LeaveGroup.

// groupPartitions is the partition count of the group tests' topics.
const groupPartitions = 12

// Records per scenario phase.
const (
	groupChurnRecords  = 2400 // the churn phase, in four chunks
	groupResumeRecords = 240  // each resume phase
	groupShortChurn    = 480  // the churn phase under -short
	groupShortResume   = 48
)

// groupWait bounds a wait for deliveries or a group state; it only guards
// against hangs.
const groupWait = 90 * time.Second

// groupBrokerConfig is the broker configuration of the group tests:
// group.initial.rebalance.delay.ms shortened from 3 s, since every phase
// starts an empty group, to keep CI time bounded.
const groupBrokerConfig = "group.initial.rebalance.delay.ms=500\n"

// startGroupBroker starts the broker under test for the group tests: as
// startBroker does, with groupBrokerConfig for weir (kfake has no initial
// rebalance delay).
func startGroupBroker(t *testing.T) broker {
	t.Helper()
	kind := os.Getenv(brokerEnv)
	if kind != "" && kind != brokerWeir {
		return startBroker(t)
	}
	file := filepath.Join(t.TempDir(), "server.properties")
	if err := os.WriteFile(file, []byte(groupBrokerConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	b := &weirBroker{dir: t.TempDir(), addr: harness.FreeAddr(t), extra: []string{"--config", file}}
	b.start(t)
	return b
}

// memberConfig is what one consumer of the scenario is started with.
type memberConfig struct {
	addr  string
	group string
	topic string
	// id names the member in deliveries and is its client id where the
	// client takes one.
	id string
	// reset is auto.offset.reset: "earliest" or "latest".
	reset string
	// sessionTimeoutMs, when not 0, is session.timeout.ms.
	sessionTimeoutMs int
}

// groupMember is one running consumer.
type groupMember interface {
	// Stop closes the consumer as an application shutting down does
	// (leaving the group, committing what its commit mode commits on
	// close) and returns once it has.
	Stop() error
}

// groupClient adapts one client library to the group scenario.
type groupClient struct {
	name string
	// available returns nil when the client can run here.
	available func() error
	// syncCommit is set when the consumer commits each record's offset
	// synchronously before reporting it: then no record may be reported
	// committed twice.
	syncCommit bool
	// drainBeforeStop is set when a consumer stopped mid-stream may
	// commit a record it never reports (kcat): such a member is stopped
	// only once what was produced to its partitions has been delivered.
	drainBeforeStop bool
	// start starts a consumer that reports each record it consumes to d
	// and runs until Stop or the end of t.
	start func(t *testing.T, cfg memberConfig, d *deliveries) (groupMember, error)
}

// delivery is one record as a consumer reported it.
type delivery struct {
	member    string
	partition int32
	offset    int64
	key       string
	// committed is set when the consumer's synchronous commit of the
	// record's offset succeeded before it reported the record.
	committed bool
}

// deliveries collects what the members of a scenario report; it is safe
// for concurrent use.
type deliveries struct {
	mu     sync.Mutex
	all    []delivery
	errors []string
}

// add records a delivery.
func (d *deliveries) add(dl delivery) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.all = append(d.all, dl)
}

// fail records a consumer's error (a failed commit, a client error), shown
// when the scenario's checks fail.
func (d *deliveries) fail(member string, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.errors) < 50 {
		d.errors = append(d.errors, member+": "+err.Error())
	}
}

// since returns the deliveries from index i on.
func (d *deliveries) since(i int) []delivery {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.all[i:])
}

// count returns how many deliveries there were.
func (d *deliveries) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.all)
}

// errorReport returns the consumers' errors for a failure message.
func (d *deliveries) errorReport() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.errors) == 0 {
		return "consumers reported no errors"
	}
	return "consumers reported:\n  " + strings.Join(d.errors, "\n  ")
}

// waitCovered waits until every key of want was delivered at or after
// index from.
func (d *deliveries) waitCovered(ctx context.Context, from int, want map[string]location) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		missing := missingKeys(want, d.since(from))
		if len(missing) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d records never delivered, e.g. %s: %w", len(missing), len(want), missing[0], ctx.Err())
		case <-tick.C:
		}
	}
}

// waitCount waits until there were at least n deliveries.
func (d *deliveries) waitCount(ctx context.Context, n int) error {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for d.count() < n {
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d deliveries, want at least %d: %w", d.count(), n, ctx.Err())
		case <-tick.C:
		}
	}
	return nil
}

// missingKeys returns the keys of want not in got, sorted.
func missingKeys(want map[string]location, got []delivery) []string {
	seen := make(map[string]bool, len(got))
	for _, g := range got {
		seen[g.key] = true
	}
	var missing []string
	for k := range want {
		if !seen[k] {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	return missing
}

// checkDeliveries checks the deliveries of one phase against want, the
// records produced for it: each delivered at the partition and offset the
// producer was told, none missing, none from outside the phase, and, when
// noDuplicates, none reported committed twice.
func checkDeliveries(got []delivery, want map[string]location, noDuplicates bool) *problems {
	p := &problems{}
	committed := make(map[string]string)
	for _, g := range got {
		w, ok := want[g.key]
		switch {
		case !ok:
			p.addf("%s delivered %q (partition %d offset %d), which this phase did not produce", g.member, g.key, g.partition, g.offset)
			continue
		case w.Partition != g.partition || w.Offset != g.offset:
			p.addf("%s delivered %q at partition %d offset %d, produced at partition %d offset %d", g.member, g.key, g.partition, g.offset, w.Partition, w.Offset)
		}
		if !g.committed || !noDuplicates {
			continue
		}
		if first, dup := committed[g.key]; dup {
			p.addf("%q (partition %d offset %d) delivered and committed twice: by %s, then by %s", g.key, g.partition, g.offset, first, g.member)
		}
		committed[g.key] = g.member
	}
	for _, k := range missingKeys(want, got) {
		p.addf("%q (partition %d offset %d) never delivered", k, want[k].Partition, want[k].Offset)
	}
	return p
}

// groupTopic is the topic of one client's group scenario.
func groupTopic(client string) string { return "conformance-group-" + client }

// groupProducer produces the scenario's records with kgo at acks=all, each
// keyed uniquely, spread evenly over the partitions.
type groupProducer struct {
	cl    *kgo.Client
	topic string
	next  int
}

func newGroupProducer(t *testing.T, addr, topic string) *groupProducer {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &groupProducer{cl: cl, topic: topic}
}

// produce sends n records and returns where each key was stored.
func (g *groupProducer) produce(ctx context.Context, n int) (map[string]location, error) {
	recs := make([]*kgo.Record, n)
	for i := range recs {
		key := fmt.Sprintf("%s-%06d", g.topic, g.next)
		recs[i] = &kgo.Record{Topic: g.topic, Partition: int32(g.next % groupPartitions), Key: []byte(key), Value: []byte(key)}
		g.next++
	}
	if err := g.cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return nil, fmt.Errorf("produce %d records to %s: %w", n, g.topic, err)
	}
	out := make(map[string]location, n)
	for _, r := range recs {
		out[string(r.Key)] = location{Partition: r.Partition, Offset: r.Offset}
	}
	return out, nil
}

// groupAdmin wraps the kadm client the scenario inspects the group with.
type groupAdmin struct {
	adm   *kadm.Client
	group string
	topic string
}

func newGroupAdmin(t *testing.T, addr, group, topic string) *groupAdmin {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &groupAdmin{adm: kadm.NewClient(cl), group: group, topic: topic}
}

// committed returns the group's committed offset of each partition of the
// topic (-1 where none).
func (a *groupAdmin) committed(ctx context.Context) (map[int32]int64, error) {
	resp, err := a.adm.FetchOffsets(ctx, a.group)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("fetch the offsets of group %s: %w", a.group, err)
	}
	out := make(map[int32]int64, groupPartitions)
	for p := range int32(groupPartitions) {
		out[p] = -1
		if o, ok := resp.Lookup(a.topic, p); ok {
			out[p] = o.At
		}
	}
	return out, nil
}

// ends returns the log end offset of each partition.
func (a *groupAdmin) ends(ctx context.Context) (map[int32]int64, error) {
	listed, err := a.adm.ListEndOffsets(ctx, a.topic)
	if err == nil {
		err = listed.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("list the end offsets of %s: %w", a.topic, err)
	}
	out := make(map[int32]int64, groupPartitions)
	listed.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
	return out, nil
}

// waitCommittedAtEnd waits until the committed offset of every partition
// is its log end offset and returns them. A client committing on close
// has done so when Stop returned, so this normally holds at once.
func (a *groupAdmin) waitCommittedAtEnd(ctx context.Context) (map[int32]int64, error) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		committed, err := a.committed(ctx)
		var ends map[int32]int64
		if err == nil {
			ends, err = a.ends(ctx)
		}
		if err == nil && maps.Equal(committed, ends) {
			return committed, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("committed offsets %v, log end offsets %v (last error %v): %w", committed, ends, err, ctx.Err())
		case <-tick.C:
		}
	}
}

// describe returns the group's state and each member's assigned
// partitions of the topic, by client id.
func (a *groupAdmin) describe(ctx context.Context) (string, map[string][]int32, error) {
	described, err := a.adm.DescribeGroups(ctx, a.group)
	if err == nil {
		err = described.Error()
	}
	if err != nil {
		return "", nil, fmt.Errorf("describe group %s: %w", a.group, err)
	}
	g := described[a.group]
	members := make(map[string][]int32)
	for _, m := range g.Members {
		var ps []int32
		if c, ok := m.Assigned.AsConsumer(); ok {
			for _, t := range c.Topics {
				if t.Topic == a.topic {
					ps = append(ps, t.Partitions...)
				}
			}
		}
		slices.Sort(ps)
		members[m.ClientID+"/"+m.MemberID] = ps
	}
	return g.State, members, nil
}

// waitShared waits until the group is Stable with n members that each
// hold some partitions and together hold every partition once.
func (a *groupAdmin) waitShared(ctx context.Context, n int) (map[string][]int32, error) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var state string
	var members map[string][]int32
	var err error
	for {
		state, members, err = a.describe(ctx)
		if err == nil && state == "Stable" && len(members) == n && coversOnce(members) {
			return members, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("group %s: state %s, assignment %v (last error %v), want Stable with %d members sharing %d partitions: %w",
				a.group, state, members, err, n, groupPartitions, ctx.Err())
		case <-tick.C:
		}
	}
}

// coversOnce reports whether every member holds a partition and the
// members hold each partition exactly once.
func coversOnce(members map[string][]int32) bool {
	seen := make(map[int32]bool)
	for _, ps := range members {
		if len(ps) == 0 {
			return false
		}
		for _, p := range ps {
			if seen[p] {
				return false
			}
			seen[p] = true
		}
	}
	return len(seen) == groupPartitions
}

// runGroupScenario runs the scenario above with c.
func runGroupScenario(t *testing.T, c groupClient) {
	if c.available != nil {
		needClient(t, c.name, c.available())
	}
	b := startGroupBroker(t)
	topic, group := groupTopic(c.name), "conformance-group-"+c.name
	t.Logf("%s group test against %s at %s", c.name, b.Kind(), b.Addr())
	ctx, cancel := context.WithTimeout(t.Context(), 4*groupWait)
	defer cancel()
	if err := kadmCreateTopic(ctx, b.Addr(), topic, groupPartitions); err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
	s := &groupScenario{t: t, c: c, addr: b.Addr(), group: group, topic: topic, d: &deliveries{},
		prod: newGroupProducer(t, b.Addr(), topic), adm: newGroupAdmin(t, b.Addr(), group, topic), began: time.Now()}

	s.churn(ctx)
	before := s.committedAtEnd(ctx, "after the churn phase")
	b.Restart(t)
	after, err := s.adm.committed(ctx)
	if err != nil {
		t.Fatalf("after the broker restart: %v", err)
	}
	if !maps.Equal(before, after) {
		t.Fatalf("committed offsets before the broker restart %v, after %v", before, after)
	}
	s.resume(ctx, "latest")
	s.resume(ctx, "earliest")
}

// groupScenario is the state of one client's scenario run.
type groupScenario struct {
	t     *testing.T
	c     groupClient
	addr  string
	group string
	topic string
	d     *deliveries
	prod  *groupProducer
	adm   *groupAdmin
	seq   int // members started so far
	ids   map[groupMember]string
	began time.Time
}

// startMember starts the next member with auto.offset.reset reset.
func (s *groupScenario) startMember(reset string) groupMember {
	s.t.Helper()
	s.seq++
	cfg := memberConfig{addr: s.addr, group: s.group, topic: s.topic, id: fmt.Sprintf("%s-m%d", s.c.name, s.seq), reset: reset}
	m, err := s.c.start(s.t, cfg, s.d)
	if err != nil {
		s.t.Fatalf("start consumer %s: %v", cfg.id, err)
	}
	if s.ids == nil {
		s.ids = make(map[groupMember]string)
	}
	s.ids[m] = cfg.id
	return m
}

// stopMember stops m, failing the test on an error.
func (s *groupScenario) stopMember(ctx context.Context, m groupMember) {
	s.t.Helper()
	if s.c.drainBeforeStop {
		wctx, cancel := context.WithTimeout(ctx, groupWait)
		err := s.waitDrained(wctx, s.ids[m])
		cancel()
		if err != nil {
			s.fatalStuck(ctx, "before stopping "+s.ids[m], err)
		}
	}
	if err := m.Stop(); err != nil {
		s.t.Errorf("stop a %s consumer: %v", s.c.name, err)
	}
}

// waitDrained waits until the group is Stable and every record in the
// partitions assigned to member id was delivered (by any member).
func (s *groupScenario) waitDrained(ctx context.Context, id string) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var lag map[int32]int64
	var err error
	for {
		lag, err = s.memberLag(ctx, id)
		if err == nil && len(lag) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("member %s still had undelivered records %v (partition: records; last error %v): %w", id, lag, err, ctx.Err())
		case <-tick.C:
		}
	}
}

// memberLag returns, for each partition assigned to member id with
// records produced but not yet delivered, how many there are; an error
// when the group is not Stable.
func (s *groupScenario) memberLag(ctx context.Context, id string) (map[int32]int64, error) {
	state, members, err := s.adm.describe(ctx)
	if err != nil {
		return nil, err
	}
	if state != "Stable" {
		return nil, fmt.Errorf("group %s is %s", s.group, state)
	}
	ends, err := s.adm.ends(ctx)
	if err != nil {
		return nil, err
	}
	next := make(map[int32]int64)
	for _, dl := range s.d.since(0) {
		next[dl.partition] = max(next[dl.partition], dl.offset+1)
	}
	lag := make(map[int32]int64)
	for member, ps := range members {
		if !strings.HasPrefix(member, id+"/") {
			continue
		}
		for _, p := range ps {
			if n := ends[p] - next[p]; n > 0 {
				lag[p] = n
			}
		}
	}
	return lag, nil
}

// produce produces n records and returns where they went.
func (s *groupScenario) produce(ctx context.Context, n int) map[string]location {
	s.t.Helper()
	locs, err := s.prod.produce(ctx, n)
	if err != nil {
		s.t.Fatal(err)
	}
	return locs
}

// churn is phase 1.
func (s *groupScenario) churn(ctx context.Context) {
	t := s.t
	total := groupChurnRecords
	if testing.Short() {
		total = groupShortChurn
	}
	m1, m2, m3 := s.startMember("earliest"), s.startMember("earliest"), s.startMember("earliest")
	wctx, cancel := context.WithTimeout(ctx, groupWait)
	defer cancel()
	if _, err := s.adm.waitShared(wctx, 3); err != nil {
		t.Fatalf("three members never shared the topic: %v", err)
	}
	// Each membership change comes once half of the last chunk is
	// consumed, so that it lands while the members consume.
	want := make(map[string]location, total)
	chunk := func() {
		t.Helper()
		maps.Copy(want, s.produce(ctx, total/4))
		if err := s.d.waitCount(wctx, len(want)-total/8); err != nil {
			s.fatalStuck(ctx, "churn phase", err)
		}
		t.Logf("%v: %d records produced", time.Since(s.began).Round(time.Millisecond), len(want))
	}
	chunk()
	s.stopMember(ctx, m2) // leaves while the others consume
	chunk()
	m4 := s.startMember("earliest") // joins
	chunk()
	s.stopMember(ctx, m1)
	m5 := s.startMember("earliest")
	// The last chunk goes to the three members sharing the topic.
	if _, err := s.adm.waitShared(wctx, 3); err != nil {
		s.fatalStuck(ctx, "churn phase", err)
	}
	chunk()
	if err := s.d.waitCovered(wctx, 0, want); err != nil {
		s.fatalStuck(ctx, "churn phase", err)
	}
	if _, err := s.adm.waitShared(wctx, 3); err != nil {
		t.Errorf("after the churn: %v", err)
	}
	for _, m := range []groupMember{m3, m4, m5} {
		s.stopMember(ctx, m)
	}
	got := s.d.since(0)
	s.report("churn phase", got, want)
}

// fatalStuck fails the test after a wait in phase ended with err,
// reporting the consumers' errors and the group's state.
func (s *groupScenario) fatalStuck(ctx context.Context, phase string, err error) {
	s.t.Helper()
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	state, members, derr := s.adm.describe(dctx)
	committed, cerr := s.adm.committed(dctx)
	s.t.Fatalf("%s %s: %v\n%s\ngroup state %s, assignment %v (%v); committed %v (%v)",
		s.c.name, phase, err, s.d.errorReport(), state, members, derr, committed, cerr)
}

// report checks a phase's deliveries and logs a summary.
func (s *groupScenario) report(phase string, got []delivery, want map[string]location) {
	s.t.Helper()
	byMember := make(map[string]int)
	dups := len(got) - len(want)
	for _, g := range got {
		byMember[g.member]++
	}
	s.t.Logf("%v: %s: %d records produced, %d deliveries (%d more than records), by member %v", time.Since(s.began).Round(time.Millisecond), phase, len(want), len(got), dups, byMember)
	p := checkDeliveries(got, want, s.c.syncCommit)
	if p.count > 0 {
		s.t.Logf("%s", s.d.errorReport())
	}
	reportProblems(s.t, fmt.Sprintf("%s %s", s.c.name, phase), p)
}

// committedAtEnd waits until the committed offsets are the log end
// offsets and returns them, failing the test if they never are.
func (s *groupScenario) committedAtEnd(ctx context.Context, when string) map[int32]int64 {
	s.t.Helper()
	wctx, cancel := context.WithTimeout(ctx, groupWait)
	defer cancel()
	committed, err := s.adm.waitCommittedAtEnd(wctx)
	if err != nil {
		s.t.Fatalf("%s: %v", when, err)
	}
	return committed
}

// resume is phase 3 with auto.offset.reset reset.
func (s *groupScenario) resume(ctx context.Context, reset string) {
	n := groupResumeRecords
	if testing.Short() {
		n = groupShortResume
	}
	want := s.produce(ctx, n)
	from := s.d.count()
	m := s.startMember(reset)
	wctx, cancel := context.WithTimeout(ctx, groupWait)
	defer cancel()
	if err := s.d.waitCovered(wctx, from, want); err != nil {
		s.fatalStuck(ctx, "restarted with auto.offset.reset="+reset+": did not resume from the committed offsets", err)
	}
	s.stopMember(ctx, m)
	s.report("resume with auto.offset.reset="+reset, s.d.since(from), want)
	s.committedAtEnd(ctx, "after the resume with auto.offset.reset="+reset)
}
