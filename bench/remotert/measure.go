package remotert

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirmq/weir/bench/dist"
)

// Mode is where the echo actor lives relative to the sender.
type Mode string

// The modes.
const (
	// Local: the same actor system, no remote (the reference).
	Local Mode = "local"
	// InProcess: another actor system in this process, over remote on
	// loopback.
	InProcess Mode = "in-process remote"
	// TwoProcesses: an actor system in a child process, over remote on
	// loopback.
	TwoProcesses Mode = "two processes"
)

// Options says what Measure does.
type Options struct {
	Mode Mode
	// Sequential is the number of one-at-a-time round trips timed.
	Sequential int
	// Concurrency requesters run for Duration for the throughput figure.
	Concurrency int
	Duration    time.Duration
}

// Result is what Measure saw.
type Result struct {
	Options Options
	// Latency summarises the one-at-a-time round trips.
	Latency dist.Summary
	// PerSecond is round trips per second with Concurrency outstanding.
	PerSecond float64
	// ConcurrentLatency summarises the round trips under concurrency.
	ConcurrentLatency dist.Summary
	// EnvelopeBytes is the size of one msgpack-encoded Control.
	EnvelopeBytes int
}

const childEnv = "WEIR_REMOTERT_CHILD"

// MaybeRunChild runs the echo child if this process was re-executed as
// one: an actor system with remote and the echo actor, its address on
// stdout, until stdin closes. It returns at once otherwise.
func MaybeRunChild() {
	if os.Getenv(childEnv) == "" {
		return
	}
	system, r := newSystem(true)
	if _, err := spawnEcho(system); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Println("ready " + system.Address())
	_, _ = io.Copy(io.Discard, os.Stdin)
	r.Shutdown(false)
	os.Exit(0)
}

// Measure runs one mode.
func Measure(ctx context.Context, opts Options) (Result, error) {
	res := Result{Options: opts}
	payload := make([]byte, 16)
	env, err := wrap(&Control{Seq: 1 << 40, From: 1, Term: 7, LeaderEpoch: 3, Offset: 1 << 46, Payload: payload})
	if err != nil {
		return res, err
	}
	res.EnvelopeBytes = len(env.Value)

	var sender *actor.ActorSystem
	var target *actor.PID
	switch opts.Mode {
	case Local:
		sender, _ = newSystem(false)
		target, err = spawnEcho(sender)
		if err != nil {
			return res, err
		}
	case InProcess:
		server, rs := newSystem(true)
		defer rs.Shutdown(false)
		if _, err := spawnEcho(server); err != nil {
			return res, err
		}
		var rc interface{ Shutdown(bool) }
		sender, rc = newSystem(true)
		defer rc.Shutdown(false)
		target = actor.NewPID(server.Address(), EchoName)
	case TwoProcesses:
		addr, stop, err := startChild()
		if err != nil {
			return res, err
		}
		defer stop()
		var rc interface{ Shutdown(bool) }
		sender, rc = newSystem(true)
		defer rc.Shutdown(false)
		target = actor.NewPID(addr, EchoName)
	default:
		return res, fmt.Errorf("unknown mode %q", opts.Mode)
	}

	// Warm up: connect the endpoint and let both sides' goroutines settle.
	for i := range 200 {
		if err := request(sender, target, uint64(i), payload, 10*time.Second); err != nil {
			return res, fmt.Errorf("warm-up: %w", err)
		}
	}
	lat := make([]time.Duration, 0, opts.Sequential)
	for i := range opts.Sequential {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		t0 := time.Now()
		if err := request(sender, target, uint64(i), payload, 5*time.Second); err != nil {
			return res, err
		}
		lat = append(lat, time.Since(t0))
	}
	res.Latency = dist.Of(lat)

	var n atomic.Int64
	var mu sync.Mutex
	var clat []time.Duration
	var firstErr error
	var wg sync.WaitGroup
	deadline := time.Now().Add(opts.Duration)
	start := time.Now()
	for w := range opts.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for seq := uint64(w) << 32; time.Now().Before(deadline); seq++ {
				t0 := time.Now()
				if err := request(sender, target, seq, payload, 5*time.Second); err != nil {
					mu.Lock()
					firstErr = errors.Join(firstErr, err)
					mu.Unlock()
					return
				}
				mine = append(mine, time.Since(t0))
				n.Add(1)
			}
			mu.Lock()
			clat = append(clat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return res, firstErr
	}
	res.PerSecond = float64(n.Load()) / time.Since(start).Seconds()
	res.ConcurrentLatency = dist.Of(clat)
	return res, nil
}

// startChild starts the echo child and returns its remote address.
func startChild() (string, func(), error) {
	self, err := os.Executable()
	if err != nil {
		return "", nil, fmt.Errorf("own executable: %w", err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() {
		_ = stdin.Close()
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "ready "); ok {
				addr <- a
			}
		}
		close(addr)
	}()
	select {
	case a, ok := <-addr:
		if !ok {
			stop()
			return "", nil, errors.New("echo child exited before ready")
		}
		return a, stop, nil
	case <-time.After(30 * time.Second):
		stop()
		return "", nil, errors.New("echo child not ready after 30s")
	}
}
