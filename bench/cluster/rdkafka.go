package cluster

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

// rdkafkaScript produces with confluent-kafka (librdkafka) at its
// defaults, only bootstrap.servers set, one record of 100 bytes to every
// partition each interval, choosing the partition in produce(). The
// delivery callbacks run inside poll(), which the loop calls until the
// next interval, so an acknowledgement is timestamped within a
// millisecond of its arrival. It prints:
//
//	ready VERSION               every partition acknowledged a first record
//	gap P FROM_NS TO_NS         a gap between consecutive acks of P above min
//	last NS,NS,...              each partition's latest ack, every 50 ms
//	done ACKED FAILED DROPPED VERSION   at the end, after stdin closed
//
// Times are Unix nanoseconds (CLOCK_REALTIME, as Go's wall clock).
//
// For a look at what librdkafka does in a round, WEIR_BENCH_RDKAFKA_DEBUG
// sets its debug contexts (as "broker,topic,metadata,msg") and
// WEIR_BENCH_RDKAFKA_LOG names the file its log (stderr) then goes to;
// each line carries a Unix timestamp to the millisecond.
const rdkafkaScript = `
import os, sys, threading, time
from confluent_kafka import Producer, libversion
boot, topic = sys.argv[1], sys.argv[2]
parts, every, min_gap = int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
conf = {'bootstrap.servers': boot}
if os.environ.get('WEIR_BENCH_RDKAFKA_DEBUG'):
    conf['debug'] = os.environ['WEIR_BENCH_RDKAFKA_DEBUG']
if os.environ.get('WEIR_BENCH_RDKAFKA_LOG'):
    os.dup2(os.open(os.environ['WEIR_BENCH_RDKAFKA_LOG'], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644), 2)
p = Producer(conf)
last = [0] * parts
counts = {'acked': 0, 'failed': 0, 'dropped': 0}
out = sys.stdout
def cb(err, msg):
    if err is not None:
        counts['failed'] += 1
        return
    now = time.time_ns()
    i = msg.partition()
    prev = last[i]
    if prev and now - prev > min_gap:
        out.write('gap %d %d %d\n' % (i, prev, now))
    last[i] = now
    counts['acked'] += 1
value = b'x' * 100
for i in range(parts):
    p.produce(topic, value, partition=i, callback=cb)
deadline = time.time() + 60
while min(last) == 0 and time.time() < deadline:
    p.poll(0.1)
if min(last) == 0:
    print('first records not acknowledged', flush=True)
    sys.exit(1)
print('ready ' + libversion()[0], flush=True)
stop = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
nxt = time.time()
report = nxt
while not stop.is_set():
    for i in range(parts):
        try:
            p.produce(topic, value, partition=i, callback=cb)
        except BufferError:
            counts['dropped'] += 1
    nxt += every
    now = time.time()
    if nxt < now:
        nxt = now
    while True:
        left = nxt - time.time()
        if left <= 0:
            break
        p.poll(left)
    if time.time() >= report:
        out.write('last ' + ','.join(str(t) for t in last) + '\n')
        out.flush()
        report = time.time() + 0.05
p.flush(10)
out.write('last ' + ','.join(str(t) for t in last) + '\n')
print('done %d %d %d %s' % (counts['acked'], counts['failed'], counts['dropped'], libversion()[0]), flush=True)
`

// rdkafkaProducer is the script above running under Config.Python.
type rdkafkaProducer struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	log     *ackLog
	version string
	lines   chan string // lines other than gap and last, until EOF
	stderr  *strings.Builder
	wg      sync.WaitGroup
	mu      sync.Mutex
}

// startRdkafka starts the script and returns once it printed ready.
func startRdkafka(python string, seeds []string, topic string, partitions int, every, minGap, timeout time.Duration) (*rdkafkaProducer, error) {
	dir, err := os.MkdirTemp("", "weir-bench-rdkafka-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "produce.py")
	if err := os.WriteFile(script, []byte(rdkafkaScript), 0o600); err != nil {
		return nil, err
	}
	cmd := exec.Command(python, script, strings.Join(seeds, ","), topic, strconv.Itoa(partitions),
		strconv.FormatFloat(every.Seconds(), 'f', -1, 64), strconv.FormatInt(minGap.Nanoseconds(), 10))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	r := &rdkafkaProducer{cmd: cmd, log: newAckLog(partitions, minGap), lines: make(chan string, 16), stderr: &strings.Builder{}}
	if r.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", python, err)
	}
	r.wg.Add(2)
	go r.readStdout(stdout)
	go r.readStderr(stderr)
	select {
	case l, ok := <-r.lines:
		v, isReady := strings.CutPrefix(l, "ready ")
		if !ok || !isReady {
			r.kill()
			return nil, fmt.Errorf("librdkafka producer: %q; stderr: %s", l, r.stderrTail())
		}
		r.version = v
	case <-time.After(timeout + 60*time.Second):
		r.kill()
		return nil, fmt.Errorf("librdkafka producer not ready; stderr: %s", r.stderrTail())
	}
	return r, nil
}

// readStdout feeds gap and last lines into the ack log and passes the
// others on.
func (r *rdkafkaProducer) readStdout(stdout io.Reader) {
	defer r.wg.Done()
	defer close(r.lines)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "gap "):
			f := strings.Fields(line)
			if len(f) != 4 {
				continue
			}
			p, _ := strconv.Atoi(f[1])
			from, _ := strconv.ParseInt(f[2], 10, 64)
			to, _ := strconv.ParseInt(f[3], 10, 64)
			r.log.addGap(gap{partition: int32(p), from: time.Unix(0, from), to: time.Unix(0, to)})
		case strings.HasPrefix(line, "last "):
			for i, s := range strings.Split(strings.TrimPrefix(line, "last "), ",") {
				if ns, err := strconv.ParseInt(s, 10, 64); err == nil && ns > 0 {
					r.log.setLast(int32(i), time.Unix(0, ns))
				}
			}
		case strings.HasPrefix(line, "done ") || strings.HasPrefix(line, "ready "):
			r.lines <- line
		default:
			select { // anything else only when someone waits for it
			case r.lines <- line:
			default:
			}
		}
	}
}

func (r *rdkafkaProducer) readStderr(stderr io.Reader) {
	defer r.wg.Done()
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		r.mu.Lock()
		if r.stderr.Len() < 64<<10 {
			r.stderr.WriteString(sc.Text() + "\n")
		}
		r.mu.Unlock()
	}
}

func (r *rdkafkaProducer) stderrTail() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.stderr.String()
	if len(s) > 2000 {
		s = s[len(s)-2000:]
	}
	return s
}

func (r *rdkafkaProducer) kill() {
	_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
	r.wg.Wait()
	_ = r.cmd.Wait()
}

func (r *rdkafkaProducer) label() string {
	if r.version == "" {
		return "librdkafka"
	}
	return "librdkafka " + r.version
}

func (r *rdkafkaProducer) acks() *ackLog { return r.log }

// stop closes the script's stdin and reads its summary.
func (r *rdkafkaProducer) stop() error {
	_ = r.stdin.Close()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case l, ok := <-r.lines:
			if !ok {
				r.wg.Wait()
				if err := r.cmd.Wait(); err != nil {
					return fmt.Errorf("librdkafka producer: %w; stderr: %s", err, r.stderrTail())
				}
				return nil
			}
			if f := strings.Fields(l); len(f) == 5 && f[0] == "done" {
				acked, _ := strconv.ParseInt(f[1], 10, 64)
				failed, _ := strconv.ParseInt(f[2], 10, 64)
				dropped, _ := strconv.ParseInt(f[3], 10, 64)
				// The log counted no acks itself: the script did.
				r.log.count(acked, failed, dropped)
			}
		case <-timeout:
			r.kill()
			return errors.New("librdkafka producer: no summary within 30s after stdin closed")
		}
	}
}

// rdkafkaAvailable reports why python cannot run the librdkafka producer,
// or nil when it can.
func rdkafkaAvailable(ctx context.Context, python string) error {
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(cctx, python, "-c", "import confluent_kafka").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s cannot import confluent_kafka: %v %s", python, err, strings.TrimSpace(string(out)))
	}
	return nil
}
