package clientprobe

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Client is a client library under test.
type Client string

// The clients.
const (
	FranzGo    Client = "franz-go"
	Librdkafka Client = "librdkafka"
)

// clientStats is what the client itself reports.
type clientStats struct {
	acked, failed int64
	// refused counts failed connection attempts to the old leader
	// (franz-go: every dial, from its hook; librdkafka: the lines its
	// default logger printed, which suppresses repeats).
	refused int64
	version string
}

// producer is a running client.
type producer interface {
	stop() clientStats
}

// produceEvery is the client's record rate: one 100-byte record every 2 ms.
const produceEvery = 2 * time.Millisecond

// startProducer starts client producing to Topic through seeds and
// returns once its first record was acknowledged.
func startProducer(ctx context.Context, client Client, seeds []string, oldLeader int32, oldAddr string) (producer, error) {
	switch client {
	case FranzGo:
		return startFranz(ctx, seeds, oldLeader)
	case Librdkafka:
		return startRdkafka(seeds, oldAddr)
	}
	return nil, fmt.Errorf("unknown client %q", client)
}

type franz struct {
	cl            *kgo.Client
	cancel        func()
	done          chan struct{}
	acked, failed atomic.Int64
	hook          *connectHook
}

// connectHook counts failed dials to one node.
type connectHook struct {
	node    int32
	refused atomic.Int64
}

func (h *connectHook) OnBrokerConnect(meta kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	if err != nil && meta.NodeID == h.node {
		h.refused.Add(1)
	}
}

func startFranz(ctx context.Context, seeds []string, oldLeader int32) (*franz, error) {
	hook := &connectHook{node: oldLeader}
	// Defaults except where the records go and the hook that counts dials.
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic(Topic), kgo.WithHooks(hook))
	if err != nil {
		return nil, fmt.Errorf("franz-go client: %w", err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: make([]byte, 100)}).FirstErr(); err != nil {
		cl.Close()
		return nil, fmt.Errorf("franz-go first record: %w", err)
	}
	pctx, cancel := context.WithCancel(context.Background())
	f := &franz{cl: cl, cancel: cancel, done: make(chan struct{}), hook: hook}
	f.acked.Add(1)
	go func() {
		defer close(f.done)
		tick := time.NewTicker(produceEvery)
		defer tick.Stop()
		for {
			select {
			case <-pctx.Done():
				return
			case <-tick.C:
			}
			cl.Produce(pctx, &kgo.Record{Value: make([]byte, 100)}, func(_ *kgo.Record, err error) {
				if err == nil {
					f.acked.Add(1)
				} else if !errors.Is(err, context.Canceled) {
					f.failed.Add(1)
				}
			})
		}
	}()
	return f, nil
}

func (f *franz) stop() clientStats {
	f.cancel()
	<-f.done
	fctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = f.cl.Flush(fctx)
	f.cl.Close()
	return clientStats{acked: f.acked.Load(), failed: f.failed.Load(), refused: f.hook.refused.Load(), version: "franz-go v1.22.3"}
}

// rdkafkaScript produces with confluent-kafka at its defaults (only
// bootstrap.servers set), one record every 2 ms, until stdin closes; it
// prints "ready" after the first acknowledgement and a summary at the end.
const rdkafkaScript = `
import sys, threading, time
from confluent_kafka import Producer, libversion
p = Producer({'bootstrap.servers': sys.argv[1]})
topic = sys.argv[2]
acked = [0]; failed = [0]
def cb(err, msg):
    if err is None:
        acked[0] += 1
    else:
        failed[0] += 1
p.produce(topic, b'x' * 100, callback=cb)
p.flush(30)
if acked[0] != 1:
    print('first record failed', flush=True); sys.exit(1)
print('ready', flush=True)
stop = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
while not stop.is_set():
    p.produce(topic, b'x' * 100, callback=cb)
    p.poll(0)
    time.sleep(0.002)
p.flush(10)
print('done %d %d %s' % (acked[0], failed[0], libversion()[0]), flush=True)
`

type rdkafka struct {
	cmd     *exec.Cmd
	stdin   interface{ Close() error }
	lines   chan string
	refused atomic.Int64
	wg      sync.WaitGroup
}

func startRdkafka(seeds []string, oldAddr string) (*rdkafka, error) {
	dir, err := os.MkdirTemp("", "weir-failover-")
	if err != nil {
		return nil, err
	}
	script := filepath.Join(dir, "produce.py")
	if err := os.WriteFile(script, []byte(rdkafkaScript), 0o600); err != nil {
		return nil, err
	}
	cmd := exec.Command("/usr/bin/python3", script, strings.Join(seeds, ","), Topic)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
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
		return nil, fmt.Errorf("python3: %w", err)
	}
	r := &rdkafka{cmd: cmd, stdin: stdin, lines: make(chan string, 16)}
	r.wg.Add(2)
	go func() {
		defer r.wg.Done()
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			r.lines <- sc.Text()
		}
		close(r.lines)
	}()
	go func() {
		defer r.wg.Done()
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			l := sc.Text()
			if strings.Contains(l, oldAddr) && strings.Contains(l, "refused") {
				r.refused.Add(1)
			}
		}
	}()
	select {
	case l := <-r.lines:
		if l != "ready" {
			r.kill()
			return nil, fmt.Errorf("librdkafka producer: %q", l)
		}
	case <-time.After(30 * time.Second):
		r.kill()
		return nil, errors.New("librdkafka producer not ready after 30s")
	}
	os.RemoveAll(dir)
	return r, nil
}

func (r *rdkafka) kill() {
	_ = r.cmd.Process.Signal(syscall.SIGKILL)
	_ = r.cmd.Wait()
}

func (r *rdkafka) stop() clientStats {
	_ = r.stdin.Close()
	var st clientStats
	timeout := time.After(30 * time.Second)
	for {
		select {
		case l, ok := <-r.lines:
			if !ok {
				r.wg.Wait()
				_ = r.cmd.Wait()
				st.refused = r.refused.Load()
				return st
			}
			if f := strings.Fields(l); len(f) == 4 && f[0] == "done" {
				st.acked, _ = strconv.ParseInt(f[1], 10, 64)
				st.failed, _ = strconv.ParseInt(f[2], 10, 64)
				st.version = "librdkafka " + f[3]
			}
		case <-timeout:
			r.kill()
			st.failed = -1
			return st
		}
	}
}
