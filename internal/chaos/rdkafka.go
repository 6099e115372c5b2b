package chaos

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirmq/weir/internal/harness"
)

// Python is the interpreter that has python3-confluent-kafka (Debian's
// package); the python3 first on PATH may lack it.
const Python = "/usr/bin/python3"

// rdkafkaScript produces with confluent-kafka (librdkafka), one record
// per interval, until SIGTERM; then it flushes and exits. It prints one
// line per delivery report: "ack PARTITION OFFSET VALUE" or "fail VALUE
// ERROR", and at the end "done SENT UNFLUSHED". Arguments: bootstrap
// servers, topic, value prefix, interval in seconds, 1 for idempotence.
const rdkafkaScript = `
import signal, sys, time
from confluent_kafka import Producer

boot, topic, name, interval, idem = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5] == '1'
conf = {'bootstrap.servers': boot}
if idem:
    conf['enable.idempotence'] = True
p = Producer(conf)
stop = False

def on_term(signum, frame):
    global stop
    stop = True

signal.signal(signal.SIGTERM, on_term)

def report(err, msg):
    v = msg.value().decode()
    if err is None:
        print('ack %d %d %s' % (msg.partition(), msg.offset(), v))
    else:
        print('fail %s %s' % (v, str(err).replace('\n', ' ')))

seq = 0
while not stop:
    v = '%s-%09d' % (name, seq)
    try:
        p.produce(topic, v.encode(), on_delivery=report)
        seq += 1
    except BufferError:
        p.poll(0.1)
        continue
    p.poll(0)
    sys.stdout.flush()
    time.sleep(interval)
left = p.flush(60)
print('done %d %d' % (seq, left), flush=True)
`

// RdkafkaProducer sends records continuously with confluent-kafka
// (librdkafka) at its defaults (acks=all), in a /usr/bin/python3 child,
// and records every delivery report in a Ledger.
type RdkafkaProducer struct {
	name   string
	proc   *harness.Process
	ledger *Ledger
	acked  atomic.Int64

	mu       sync.Mutex
	done     string // the final "done" line
	badLines []string

	stopOnce sync.Once
	stopErr  error
}

// NeedRdkafka skips the test unless /usr/bin/python3 imports
// confluent_kafka (fails it under WEIR_REQUIRE_CLIENTS=1).
func NeedRdkafka(t testing.TB) {
	t.Helper()
	err := exec.Command(Python, "-c", "import confluent_kafka").Run()
	if err != nil {
		err = fmt.Errorf("%s cannot import confluent_kafka: %w", Python, err)
	}
	harness.NeedClient(t, "confluent-kafka", err)
}

// StartRdkafka starts a confluent-kafka producer, idempotent when
// idempotent is set, and returns once its first record was acknowledged.
// It skips the test when confluent-kafka is missing (NeedRdkafka) and
// fails it on error.
func StartRdkafka(t testing.TB, ledger *Ledger, o ProducerOptions, idempotent bool) *RdkafkaProducer {
	t.Helper()
	NeedRdkafka(t)
	script := filepath.Join(t.TempDir(), "produce.py")
	if err := os.WriteFile(script, []byte(rdkafkaScript), 0o644); err != nil {
		t.Fatal(err)
	}
	idem := "0"
	if idempotent {
		idem = "1"
	}
	p := &RdkafkaProducer{name: o.Name, ledger: ledger}
	proc, err := harness.Spawn(t, harness.Options{
		Path: Python,
		Args: []string{script, strings.Join(o.Seeds, ","), o.Topic, o.Name,
			strconv.FormatFloat(o.interval().Seconds(), 'f', -1, 64), idem},
		Name:   "rdkafka-" + o.Name,
		OnLine: p.line,
	})
	if err != nil {
		t.Fatal(err)
	}
	p.proc = proc
	t.Cleanup(func() { _ = p.Stop() })
	why, ok := waitFor(60*time.Second, func() (bool, string) {
		select {
		case <-proc.Done():
			return true, "exited"
		default:
		}
		return p.acked.Load() > 0, "no record acknowledged"
	})
	if !ok || p.acked.Load() == 0 {
		t.Fatalf("chaos: confluent-kafka producer %s: %s (%d failed: %v)\n%s", o.Name, why, ledger.Failed(), ledger.FailedErrors(3), proc.Stderr())
	}
	return p
}

// line handles one line the script printed.
func (p *RdkafkaProducer) line(l string) {
	f := strings.SplitN(l, " ", 4)
	switch {
	case f[0] == "ack" && len(f) == 4:
		part, err1 := strconv.ParseInt(f[1], 10, 32)
		off, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 == nil && err2 == nil {
			p.acked.Add(1)
			p.ledger.Ack(Ack{Partition: int32(part), Offset: off, Value: f[3]})
			return
		}
	case f[0] == "fail" && len(f) >= 2:
		p.ledger.Fail(f[1], errors.New(strings.Join(f[2:], " ")))
		return
	case f[0] == "done":
		p.mu.Lock()
		p.done = l
		p.mu.Unlock()
		return
	}
	p.mu.Lock()
	if len(p.badLines) < 10 {
		p.badLines = append(p.badLines, l)
	}
	p.mu.Unlock()
}

// Name returns the producer's value prefix.
func (p *RdkafkaProducer) Name() string { return p.name }

// Acked returns how many records were acknowledged so far.
func (p *RdkafkaProducer) Acked() int64 { return p.acked.Load() }

// Stop sends SIGTERM, so the script stops sending and flushes (a minute
// at most), and waits for it to exit. It returns an error when the script
// did not end cleanly: then some delivery reports may be missing, which
// only makes the ledger smaller. Calling it again returns the same error.
func (p *RdkafkaProducer) Stop() error {
	p.stopOnce.Do(func() {
		code, err := p.proc.Stop(flushTimeout + 10*time.Second)
		p.mu.Lock()
		defer p.mu.Unlock()
		switch {
		case err != nil:
			p.stopErr = fmt.Errorf("chaos: confluent-kafka producer %s: %w", p.name, err)
		case code != 0 || p.done == "":
			p.stopErr = fmt.Errorf("chaos: confluent-kafka producer %s: exit status %d, last line %q, unexpected lines %q\n%s",
				p.name, code, p.done, p.badLines, p.proc.Stderr())
		case strings.Fields(p.done)[2] != "0":
			p.stopErr = fmt.Errorf("chaos: confluent-kafka producer %s: %s: records left unflushed", p.name, p.done)
		}
	})
	return p.stopErr
}
