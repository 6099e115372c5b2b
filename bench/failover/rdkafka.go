package failover

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Clients.
const (
	ClientFranzGo    = "franz-go"
	ClientLibrdkafka = "librdkafka"
)

// sender is the verifiable producer of a run: franz-go in this process
// (*producer) or librdkafka through confluent-kafka in a Python child
// (*rdkafkaProducer).
type sender interface {
	// send sends n records of round at rate per second and returns once
	// all were handed to the client; outcomes arrive in rs.
	send(ctx context.Context, round uint32, n, rate int, rs *roundSends) error
	// errorCounts are the client errors seen so far (nil when the client
	// cannot show them).
	errorCounts() map[string]int64
	close(timeout time.Duration)
}

func (p *producer) errorCounts() map[string]int64 { return p.tally.snapshot() }

// rdkafkaScript is the librdkafka producer: confluent-kafka with
// bootstrap.servers, acks, enable.idempotence and message.timeout.ms set
// (and the tuned settings with argv[8] == 1). It prints "ready VERSION"
// once constructed; for each line "round R N RATE" on stdin it produces N
// records at RATE per second (after each one's delivery when argv[7] ==
// 1), spread over the topics of argv[5], values as record.go encodes
// them, and prints "sent R"; each delivery report is a line
// "a R SEQ TOPIC PARTITION OFFSET SENT_NS DONE_NS ERR" (ERR 0 or 1).
// At stdin's end it flushes and exits.
const rdkafkaScript = `
import struct, sys, time
from confluent_kafka import Producer, libversion
boot, acks, idem, size, topics, timeout_ms, sync, tuned = sys.argv[1:9]
topics = topics.split(',')
size, sync, tuned = int(size), sync == '1', tuned == '1'
conf = {'bootstrap.servers': boot, 'acks': acks, 'enable.idempotence': idem == '1', 'message.timeout.ms': int(timeout_ms)}
if tuned:
    conf.update({'retry.backoff.ms': 50, 'topic.metadata.refresh.interval.ms': 10000, 'topic.metadata.refresh.fast.interval.ms': 100})
p = Producer(conf)
out = sys.stdout
def report(rnd, seq, ti, sent):
    def cb(err, msg):
        done = time.time_ns()
        if err is None:
            out.write('a %d %d %d %d %d %d %d 0\n' % (rnd, seq, ti, msg.partition(), msg.offset(), sent, done))
        else:
            out.write('a %d %d %d -1 -1 %d %d 1\n' % (rnd, seq, ti, sent, done))
    return cb
out.write('ready %s\n' % libversion()[0]); out.flush()
for line in sys.stdin:
    f = line.split()
    if len(f) != 4 or f[0] != 'round':
        continue
    rnd, n, rate = int(f[1]), int(f[2]), float(f[3])
    start = time.monotonic()
    for seq in range(n):
        while True:
            wait = start + seq / rate - time.monotonic()
            if wait <= 0:
                break
            p.poll(wait)
        sent = time.time_ns()
        v = struct.pack('>4sIIQ', b'wbf1', rnd, seq, sent).ljust(size, b'\0')
        ti = seq % len(topics)
        while True:
            try:
                p.produce(topics[ti], v, callback=report(rnd, seq, ti, sent))
                break
            except BufferError:
                p.poll(0.01)
        if sync:
            p.flush()
        else:
            p.poll(0)
        out.flush()
    out.write('sent %d\n' % rnd); out.flush()
    while len(p) > 0:
        p.poll(0.05)
        out.flush()
p.flush(30)
out.flush()
`

// rdkafkaProducer runs rdkafkaScript.
type rdkafkaProducer struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	dir     string
	version string
	done    chan struct{}

	mu     sync.Mutex
	rounds map[uint32]*roundSends
	sent   map[uint32]chan struct{}
}

// RdkafkaAvailable reports why python cannot run the librdkafka
// producer, nil when it can.
func RdkafkaAvailable(python string) error {
	out, err := exec.Command(python, "-c", "import confluent_kafka").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s cannot import confluent_kafka: %w: %s", python, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// newRdkafkaProducer starts the Python child and waits for its ready line.
func newRdkafkaProducer(cfg Config, seeds []string) (*rdkafkaProducer, error) {
	if err := RdkafkaAvailable(cfg.Python); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(cfg.TempDir, "weir-bench-failover-rdkafka-")
	if err != nil {
		return nil, err
	}
	script := filepath.Join(dir, "produce.py")
	if err := os.WriteFile(script, []byte(rdkafkaScript), 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	acks := map[string]string{AcksAll: "all", AcksLeader: "1", AcksNone: "0"}[cfg.Acks]
	flag := func(b bool) string { return map[bool]string{true: "1", false: "0"}[b] }
	cmd := exec.Command(cfg.Python, script, strings.Join(seeds, ","), acks, flag(cfg.Idempotent), strconv.Itoa(cfg.RecordSize),
		strings.Join(cfg.topicNames(), ","), strconv.FormatInt(cfg.RoundTimeout.Milliseconds(), 10), flag(cfg.Sync), flag(cfg.ClientTuned))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("librdkafka producer: %w", err)
	}
	p := &rdkafkaProducer{cmd: cmd, stdin: stdin, dir: dir, done: make(chan struct{}),
		rounds: map[uint32]*roundSends{}, sent: map[uint32]chan struct{}{}}
	ready := make(chan string, 1)
	go p.read(stdout, ready)
	select {
	case v := <-ready:
		p.version = v
		return p, nil
	case <-p.done:
	case <-time.After(30 * time.Second):
	}
	p.kill()
	return nil, errors.New("librdkafka producer: no ready line within 30 s")
}

// read parses the child's lines until it exits.
func (p *rdkafkaProducer) read(r io.Reader, ready chan<- string) {
	defer close(p.done)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 2 && f[0] == "ready":
			ready <- f[1]
		case len(f) == 2 && f[0] == "sent":
			rnd, _ := strconv.ParseUint(f[1], 10, 32)
			p.mu.Lock()
			if ch := p.sent[uint32(rnd)]; ch != nil {
				close(ch)
				delete(p.sent, uint32(rnd))
			}
			p.mu.Unlock()
		case len(f) == 9 && f[0] == "a":
			p.deliver(f[1:])
		}
	}
}

// deliver records one delivery report.
func (p *rdkafkaProducer) deliver(f []string) {
	var n [8]int64
	for i, s := range f {
		n[i], _ = strconv.ParseInt(s, 10, 64)
	}
	p.mu.Lock()
	rs := p.rounds[uint32(n[0])]
	p.mu.Unlock()
	if rs == nil {
		return
	}
	a := Ack{Seq: uint32(n[1]), Topic: int32(n[2]), Partition: int32(n[3]), Offset: n[4], SentNs: n[5], DoneNs: n[6], Err: n[7] != 0}
	rs.mu.Lock()
	rs.acks = append(rs.acks, a)
	rs.mu.Unlock()
	if !a.Err {
		rs.lastAck.Store(a.DoneNs)
	}
	rs.done.Add(1)
}

func (p *rdkafkaProducer) send(ctx context.Context, round uint32, n, rate int, rs *roundSends) error {
	ch := make(chan struct{})
	p.mu.Lock()
	p.rounds[round], p.sent[round] = rs, ch
	p.mu.Unlock()
	rs.mu.Lock()
	rs.sent = n // the child sends them all; progress shows outcomes
	rs.mu.Unlock()
	if _, err := fmt.Fprintf(p.stdin, "round %d %d %d\n", round, n, rate); err != nil {
		return fmt.Errorf("librdkafka producer: %w", err)
	}
	select {
	case <-ch:
		return nil
	case <-p.done:
		return errors.New("librdkafka producer exited")
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func (p *rdkafkaProducer) errorCounts() map[string]int64 { return nil }

func (p *rdkafkaProducer) kill() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	_ = p.cmd.Wait()
	os.RemoveAll(p.dir)
}

func (p *rdkafkaProducer) close(timeout time.Duration) {
	_ = p.stdin.Close()
	select {
	case <-p.done:
		_ = p.cmd.Wait()
		os.RemoveAll(p.dir)
	case <-time.After(timeout + 35*time.Second): // the child flushes for up to 30 s
		p.kill()
	}
}
