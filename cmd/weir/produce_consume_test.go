package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// runInput runs a weir command line in-process; `weir produce` reads
// stdin.
func runInput(ctx context.Context, stdin string, args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	if args[0] != "produce" {
		code = run(ctx, args, &out, &errOut)
		return code, out.String(), errOut.String()
	}
	err := produce(ctx, args[1:], strings.NewReader(stdin), &out, &errOut)
	return exitStatus("produce", err, &errOut), out.String(), errOut.String()
}

// mustProduce runs `weir produce` with stdin, which must succeed, and
// returns its stdout.
func mustProduce(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	code, stdout, stderr := runInput(t.Context(), stdin, append([]string{"produce"}, args...)...)
	if code != 0 {
		t.Fatalf("weir produce %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, stdout, stderr)
	}
	return stdout
}

// consumeLines runs `weir consume`, which must succeed, and returns its
// output lines. A consume still waiting for records after a minute is
// interrupted (as Ctrl-C would), so a test missing records fails on what
// was printed instead of hanging.
func consumeLines(t *testing.T, args ...string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	code, out, stderr := runInput(ctx, "", append([]string{"consume"}, args...)...)
	if code != 0 {
		t.Fatalf("weir consume %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, stderr)
	}
	if out == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(out, "\n"), "\n")
}

// murmur2Partition is the partition Kafka's default partitioner picks for
// key among n, computed by kafka-go's implementation of it.
func murmur2Partition(key string, n int) int32 {
	ps := make([]int, n)
	for i := range ps {
		ps[i] = i
	}
	return int32(kafka.Murmur2Balancer{Consistent: true}.Balance(kafka.Message{Key: []byte(key)}, ps...))
}

var producedLineRE = regexp.MustCompile(`^Produced to partition (\d+) at offset (\d+) with timestamp (\d+)\.$`)

// weir produce sends keys, values and headers that weir consume -f json
// prints back; keyed records land on the partition of Kafka's murmur2
// partitioner, and each produced record is reported as rpk does.
func TestProduceConsumeRoundTrip(t *testing.T) {
	b := startKfake(t, 3, "rt")
	input := "k1 one\nk2 two words\nk3 \nk4 {\"json\": true}"
	out := mustProduce(t, input, "rt", "--brokers", b, "-f", `%k %v\n`, "-H", "origin=weir", "-H", "trace:abc")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("produce printed %d lines, want 4:\n%s", len(lines), out)
	}
	// One line per record, as acknowledged (partitions answer in any order).
	for _, l := range lines {
		if !producedLineRE.MatchString(l) {
			t.Fatalf("produce line %q", l)
		}
	}

	type record struct {
		Topic, Key, Value string
		Headers           []struct{ Key, Value string }
		Partition         int32
		Offset            int64
		Timestamp         int64
	}
	var got []record
	for _, l := range consumeLines(t, "--topic", "rt", "--brokers", b, "-o", ":end", "-f", "json") {
		var r record
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("json line %q: %v", l, err)
		}
		got = append(got, r)
	}
	slices.SortFunc(got, func(a, b record) int { return strings.Compare(a.Key, b.Key) })
	want := []string{"one", "two words", "", `{"json": true}`}
	if len(got) != len(want) {
		t.Fatalf("consumed %d records, want %d: %+v", len(got), len(want), got)
	}
	for i, r := range got {
		hs := fmt.Sprint(r.Headers)
		if r.Topic != "rt" || r.Key != fmt.Sprintf("k%d", i+1) || r.Value != want[i] || hs != "[{origin weir} {trace abc}]" ||
			r.Partition != murmur2Partition(r.Key, 3) || r.Timestamp <= 0 {
			t.Errorf("record %d: %+v", i, r)
		}
	}
}

// --partition sends every record to one partition, and -p consumes only
// it.
func TestProducePartitionFlag(t *testing.T) {
	b := startKfake(t, 3, "fixed")
	mustProduce(t, "a\nb\nc\n", "fixed", "--brokers", b, "-p", "2", "-o", "")
	if got := consumeLines(t, "fixed", "--brokers", b, "-o", ":end", "-f", `%p:%v\n`); strings.Join(got, " ") != "2:a 2:b 2:c" {
		t.Errorf("consumed %q, want a b c from partition 2", got)
	}
	if got := consumeLines(t, "fixed", "--brokers", b, "-o", ":end", "-p", "0,1"); got != nil {
		t.Errorf("partitions 0 and 1 held %q", got)
	}
	// %p in the input picks the partition once -p chose the manual
	// partitioner.
	mustProduce(t, "0 x\n1 y\n", "fixed", "--brokers", b, "-p", "2", "-f", `%p %v\n`, "-o", "")
	if got := consumeLines(t, "fixed", "--brokers", b, "-o", ":end", "-p", "0,1", "-f", `%p:%v\n`); strings.Join(slices.Sorted(slices.Values(got)), " ") != "0:x 1:y" {
		t.Errorf("consumed %q, want x from 0 and y from 1", got)
	}
}

// %t in the input picks each record's topic; no --topic is needed.
func TestProduceTopicFromInput(t *testing.T) {
	b := startKfake(t, 1, "a", "b")
	mustProduce(t, "a x\nb y\na z\n", "--brokers", b, "-f", `%t %v\n`, "-o", `%t\n`)
	for topic, want := range map[string]string{"a": "x z", "b": "y"} {
		if got := consumeLines(t, topic, "--brokers", b, "-o", ":end"); strings.Join(got, " ") != want {
			t.Errorf("topic %s holds %q, want %q", topic, got, want)
		}
	}
}

// seqFixture is a kfake broker with topic "seq": partition 0 holds values
// 0..9 with timestamps base+i seconds, partition 1 holds five records.
func seqFixture(t *testing.T) (brokers string, base int64) {
	t.Helper()
	brokers = startKfake(t, 2, "seq")
	base = time.Now().Add(-time.Hour).Truncate(time.Second).UnixMilli()
	cl := newTestClient(t, brokers, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i := range 10 {
		r := &kgo.Record{Topic: "seq", Partition: 0, Value: []byte(strconv.Itoa(i)), Timestamp: time.UnixMilli(base + int64(i)*1000)}
		if err := cl.ProduceSync(t.Context(), r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5 {
		r := &kgo.Record{Topic: "seq", Partition: 1, Value: []byte("p1-" + strconv.Itoa(i))}
		if err := cl.ProduceSync(t.Context(), r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	return brokers, base
}

// -o's forms start and stop where rpk's do, and -n stops after COUNT
// records however many partitions they come from.
func TestConsumeOffsetsAndCount(t *testing.T) {
	b, base := seqFixture(t)
	at := func(sec int) string { return strconv.FormatInt(base+int64(sec)*1000, 10) }
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-o", ":end"}, "0 1 2 3 4 5 6 7 8 9"},
		{[]string{"-o", "+7:end"}, "7 8 9"},
		{[]string{"-o", "-2:end"}, "8 9"},
		{[]string{"-o", "3:5"}, "3 4"},
		{[]string{"-o", ":2"}, "0 1"},
		{[]string{"-o", "8:99"}, "8 9"},
		{[]string{"-o", "10:end"}, ""},
		{[]string{"-o", "@" + at(4) + ":" + at(6)}, "4 5"},
		{[]string{"-o", "@" + at(8) + ":end"}, "8 9"},
		{[]string{"-o", "@:" + at(1)}, "0"},
		{[]string{"-o", "@" + at(7) + ":1500ms"}, "7 8"},
		{[]string{"-o", "4", "-n", "3"}, "4 5 6"},
		{[]string{"-o", "-3", "-n", "2"}, "7 8"},
		{[]string{"-o", "@" + at(9), "-n", "1"}, "9"},
		{[]string{"-n", "2"}, "0 1"},
		{[]string{"--from-beginning", "-n", "2"}, "0 1"},
	}
	for _, c := range cases {
		args := append([]string{"seq", "--brokers", b, "-p", "0", "-f", `%v\n`}, c.args...)
		if got := strings.Join(consumeLines(t, args...), " "); got != c.want {
			t.Errorf("consume %s: %q, want %q", strings.Join(c.args, " "), got, c.want)
		}
	}
	// Both partitions: 12 records of the 15, then exit.
	if got := consumeLines(t, "seq", "--brokers", b, "-n", "12"); len(got) != 12 {
		t.Errorf("-n 12 printed %d records: %q", len(got), got)
	}
	if got := consumeLines(t, "seq", "--brokers", b, "-p", "1", "-o", ":end"); strings.Join(got, " ") != "p1-0 p1-1 p1-2 p1-3 p1-4" {
		t.Errorf("-p 1 printed %q", got)
	}
	if got := consumeLines(t, "seq", "--brokers", b, "-o", "-1:end", "-f", `%p/%o\n`); strings.Join(slices.Sorted(slices.Values(got)), " ") != "0/9 1/4" {
		t.Errorf("-o -1:end over both partitions printed %q", got)
	}
}

// A group member commits the offsets of the records it printed and no
// more; the next member of the group resumes there.
func TestConsumeGroupCommits(t *testing.T) {
	b, _ := seqFixture(t)
	seen := map[string]bool{}
	committed := func() map[int32]int64 {
		t.Helper()
		adm := kadm.NewClient(newTestClient(t, b))
		offs, err := adm.FetchOffsets(t.Context(), "readers")
		if err == nil {
			err = offs.Error()
		}
		if err != nil {
			t.Fatal(err)
		}
		m := map[int32]int64{}
		offs.Each(func(o kadm.OffsetResponse) { m[o.Partition] = o.At })
		return m
	}
	next := map[int32]int64{}
	for run, n := range []int{4, 11} {
		lines := consumeLines(t, "seq", "--brokers", b, "-g", "readers", "-n", strconv.Itoa(n), "-f", `%p %o\n`)
		if len(lines) != n {
			t.Fatalf("run %d printed %d records, want %d: %q", run, len(lines), n, lines)
		}
		for _, l := range lines {
			if seen[l] {
				t.Errorf("run %d printed %s again", run, l)
			}
			seen[l] = true
			var p int32
			var o int64
			fmt.Sscanf(l, "%d %d", &p, &o)
			next[p] = max(next[p], o+1)
		}
		if got := committed(); fmt.Sprint(got) != fmt.Sprint(next) {
			t.Errorf("after run %d the group committed %v, want %v (one past each printed record)", run, got, next)
		}
	}
	if len(seen) != 15 || next[0] != 10 || next[1] != 5 {
		t.Errorf("two runs printed %d distinct records, up to %v; want all 15", len(seen), next)
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader in two
// goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// Without -n or an end, weir consume follows the partition, printing
// records produced after it started, until interrupted; then it exits 0.
func TestConsumeFollowsUntilInterrupted(t *testing.T) {
	b := startKfake(t, 1, "live")
	mustProduce(t, "before\n", "live", "--brokers", b)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var stdout, stderr syncBuffer
	code := make(chan int, 1)
	go func() { code <- run(ctx, []string{"consume", "live", "--brokers", b}, &stdout, &stderr) }()
	waitOutput := func(want string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for stdout.String() != want {
			if time.Now().After(deadline) {
				t.Fatalf("consume printed %q, want %q; stderr %q", stdout.String(), want, stderr.String())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitOutput("before\n")
	mustProduce(t, "after\n", "live", "--brokers", b)
	waitOutput("before\nafter\n")
	cancel()
	if c := <-code; c != 0 || stderr.String() != "" {
		t.Errorf("interrupted consume: exit %d, stderr %q; want 0 and nothing", c, stderr.String())
	}
}

func TestProduceConsumeUsageErrorsExitTwo(t *testing.T) {
	cases := [][]string{
		{"produce"},
		{"produce", "a", "b"},
		{"produce", "--topic", "a", "b"},
		{"produce", "t", "-p", "-2"},
		{"produce", "t", "-f", `%p %v\n`},
		{"produce", "t", "-f", ""},
		{"produce", "t", "-f", "%v{nosuch}"},
		{"produce", "t", "--acks", "2"},
		{"produce", "t", "-z", "brotli"},
		{"produce", "t", "-H", "novalue"},
		{"produce", "t", "--output-format", "%v{nosuch}"},
		{"produce", "t", "--no-such-flag"},
		{"consume"},
		{"consume", "t", "-o", "sometime"},
		{"consume", "t", "-o", "5:3"},
		{"consume", "t", "-n", "-1"},
		{"consume", "t", "-p", "x"},
		{"consume", "t", "-p", "-1"},
		{"consume", "t", "-g", "g", "-p", "0"},
		{"consume", "t", "-g", "g", "-o", ":end"},
		{"consume", "t", "-f", ""},
		{"consume", "t", "--from-beginning", "-o", "end"},
		{"consume", "t", "-f", "%v{nosuch}"},
	}
	for _, args := range cases {
		code, stdout, stderr := runInput(t.Context(), "", append(args, "--brokers", "127.0.0.1:1")...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, "weir "+args[0]+": ") {
			t.Errorf("weir %q: exit %d, stdout %q, stderr %q; want 2 and the mistake", args, code, stdout, stderr)
		}
	}
}

func TestProduceConsumeFailuresExitOne(t *testing.T) {
	b := startKfake(t, 1, "one")
	cases := []struct {
		stdin string
		args  []string
		want  string
	}{
		{"", []string{"consume", "missing"}, `weir consume: topic "missing": UNKNOWN_TOPIC_OR_PARTITION: `},
		{"", []string{"consume", "one", "-p", "3"}, `weir consume: topic "one" has no partition 3 (it has 1, from 0)`},
		{"x\n", []string{"produce", "one", "-p", "3"}, `weir produce: 1 of 1 records not produced; first: input record 1 to topic "one": `},
		{"k v\nnospace\n", []string{"produce", "one", "-f", `%k %v\n`}, `weir produce: input record 2 does not match the format: `},
	}
	for _, c := range cases {
		code, _, stderr := runInput(t.Context(), c.stdin, append(c.args, "--brokers", b)...)
		if code != 1 || !strings.HasPrefix(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("weir %q: exit %d, stderr %q; want 1 and %q...", c.args, code, stderr, c.want)
		}
	}
	// The record before the bad line was produced.
	if got := consumeLines(t, "one", "--brokers", b, "-o", ":end", "-f", `%k=%v\n`); strings.Join(got, " ") != "k=v" {
		t.Errorf("topic holds %q, want the one good record", got)
	}
	code, _, stderr := runInput(t.Context(), "x\n", "produce", "one", "--brokers", "127.0.0.1:1", "--timeout", "1s")
	if code != 1 || !strings.HasPrefix(stderr, `weir produce: 1 of 1 records not produced; first: input record 1 to topic "one": not acknowledged within 1s`) {
		t.Errorf("produce to no broker: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runInput(t.Context(), "", "consume", "one", "--brokers", "127.0.0.1:1", "--timeout", "300ms")
	if code != 1 || !strings.HasPrefix(stderr, "weir consume: describe topics: ") {
		t.Errorf("consume from no broker: exit %d, stderr %q", code, stderr)
	}
}

// An interrupt while weir produce waits for more input ends it at once
// with exit 0, and the records read before it are delivered.
func TestProduceInterruptedWhileReading(t *testing.T) {
	b := startKfake(t, 1, "typed")
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var stdout, stderr syncBuffer
	code := make(chan int, 1)
	go func() {
		err := produce(ctx, []string{"typed", "--brokers", b}, pr, &stdout, &stderr)
		code <- exitStatus("produce", err, &stderr)
	}()
	if _, err := io.WriteString(pw, "one\ntwo\n"); err != nil {
		t.Fatal(err)
	}
	// Both lines were read once both are acknowledged; the pipe stays
	// open, as a terminal would.
	deadline := time.Now().Add(30 * time.Second)
	for strings.Count(stdout.String(), "Produced to partition") < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("produce printed %q, stderr %q", stdout.String(), stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if c := <-code; c != 0 || stderr.String() != "" {
		t.Fatalf("interrupted produce: exit %d, stderr %q", c, stderr.String())
	}
	if got := consumeLines(t, "typed", "--brokers", b, "-o", ":end"); strings.Join(got, " ") != "one two" {
		t.Errorf("topic holds %q", got)
	}
}
