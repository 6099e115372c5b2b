package membership

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/memberlist"
)

// Options says what Measure measures.
type Options struct {
	// Profile is the timing profile of all three nodes.
	Profile Profile
	// Signal is what the victim gets: syscall.SIGKILL or syscall.SIGSTOP.
	Signal syscall.Signal
	// Load is "" (idle), "spin" or "produce" (see MaybeRunChild).
	Load string
	// Rounds is how many victims are started and killed or frozen.
	Rounds int
	// Logf, if set, gets one line per round.
	Logf func(format string, args ...any)
}

// errEarlyDead: the live victim was declared dead before the signal.
var errEarlyDead = errors.New("victim declared dead before the signal")

// Round is one victim's fate.
type Round struct {
	// First is the time from the signal to the first observer's
	// NotifyLeave for the victim; All to the second one's.
	First, All time.Duration
}

// Result is what Measure saw.
type Result struct {
	Options Options
	Rounds  []Round
	// FalseSuspicions counts memberlist "Suspect X has failed" lines, on
	// any of the three nodes, about a node that was alive; FalseDead
	// counts NotifyLeave events for a live observer.
	FalseSuspicions, FalseDead int
	// EarlyDead counts rounds whose victim, alive, was declared dead
	// before it got the signal (false deaths of the victim; such a round
	// is run again).
	EarlyDead int
	// SuspicionLines holds the false-suspicion log lines (ten per round at most).
	SuspicionLines []string
	// LoadCores is the CPU the load child used, in cores, averaged over
	// the measurement (0 when idle).
	LoadCores float64
}

// First returns the detection times by the first observer.
func (r Result) First() []time.Duration {
	var d []time.Duration
	for _, x := range r.Rounds {
		d = append(d, x.First)
	}
	return d
}

// All returns the detection times by both observers.
func (r Result) All() []time.Duration {
	var d []time.Duration
	for _, x := range r.Rounds {
		d = append(d, x.All)
	}
	return d
}

// Measure runs opts.Rounds rounds of: a fresh 3-node cluster (two observers
// here, the victim a child process), a settling time of 5 to 6 probe
// intervals (so the signal falls at a random phase of the probe schedule),
// then the signal, and the time until each observer's NotifyLeave. A round
// in which the victim is not declared dead within 30 s (or 10 times the
// profile's nominal time) is an error.
func Measure(ctx context.Context, opts Options) (Result, error) {
	res := Result{Options: opts}
	if opts.Rounds <= 0 {
		return res, errors.New("rounds must be positive")
	}
	self, err := os.Executable()
	if err != nil {
		return res, fmt.Errorf("own executable: %w", err)
	}
	var load *child
	if opts.Load != "" {
		load, err = startChild(self, []string{childEnv + "=load", loadEnv + "=" + opts.Load}, io.Discard)
		if err != nil {
			return res, fmt.Errorf("load %s: %w", opts.Load, err)
		}
		defer load.stop()
	}
	cpu0, t0 := load.cpu(), time.Now()
	for i := 0; len(res.Rounds) < opts.Rounds; i++ {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if i >= 2*opts.Rounds {
			return res, fmt.Errorf("%d of %d rounds declared the victim dead before the signal", res.EarlyDead, i)
		}
		r, err := measureRound(self, opts, i, &res)
		if errors.Is(err, errEarlyDead) {
			// A false verdict on a live node: counted, and the round
			// is run again.
			res.EarlyDead++
			if opts.Logf != nil {
				opts.Logf("%s %s load=%q round %d: live victim declared dead before the signal", opts.Profile.Name, SignalName(opts.Signal), opts.Load, i)
			}
			continue
		}
		if err != nil {
			return res, fmt.Errorf("round %d: %w", i, err)
		}
		res.Rounds = append(res.Rounds, r)
		if opts.Logf != nil {
			opts.Logf("%s %s load=%q round %d: first %s, all %s", opts.Profile.Name, SignalName(opts.Signal), opts.Load, i, r.First, r.All)
		}
	}
	if load != nil {
		res.LoadCores = (load.cpu() - cpu0).Seconds() / time.Since(t0).Seconds()
	}
	return res, nil
}

func measureRound(self string, opts Options, i int, res *Result) (Round, error) {
	victim := fmt.Sprintf("victim-%d", i)
	// A counter per round: a shut-down memberlist's probe in flight may
	// still log after the next round started.
	counter := &suspicionCounter{victim: victim}
	ev := newEvents(victim)
	var observers []*memberlist.Memberlist
	defer func() {
		for _, o := range observers {
			_ = o.Shutdown()
		}
	}()
	for j := range 2 {
		cfg := opts.Profile.Config(fmt.Sprintf("obs-%d", j), "127.0.0.1", 0, counter)
		cfg.Events = ev
		ml, err := memberlist.Create(cfg)
		if err != nil {
			return Round{}, fmt.Errorf("observer %d: %w", j, err)
		}
		observers = append(observers, ml)
	}
	seed := net.JoinHostPort("127.0.0.1", strconv.Itoa(int(observers[0].LocalNode().Port)))
	if _, err := observers[1].Join([]string{seed}); err != nil {
		return Round{}, fmt.Errorf("observer join: %w", err)
	}
	v, err := startChild(self, []string{childEnv + "=victim", profileEnv + "=" + opts.Profile.Name,
		nameEnv + "=" + victim, joinEnv + "=" + seed}, counter)
	if err != nil {
		return Round{}, fmt.Errorf("victim: %w", err)
	}
	defer v.stop()
	if err := ev.waitJoined(2, 10*time.Second); err != nil {
		return Round{}, err
	}
	settle := 5*opts.Profile.ProbeInterval + rand.N(opts.Profile.ProbeInterval)
	time.Sleep(settle)
	if ev.deadCount() > 0 {
		n, _ := counter.result()
		res.FalseSuspicions += n
		res.FalseDead += ev.falseDead()
		return Round{}, errEarlyDead
	}
	start := time.Now()
	if err := v.cmd.Process.Signal(opts.Signal); err != nil {
		return Round{}, fmt.Errorf("signal victim: %w", err)
	}
	limit := max(30*time.Second, 10*opts.Profile.ExpectedDetection())
	times, err := ev.waitDead(2, limit)
	if err != nil {
		return Round{}, err
	}
	// Stop counting before the observers shut down: the one still
	// running would rightly suspect the other.
	counter.setVictim("")
	res.FalseDead += ev.falseDead()
	n, lines := counter.result()
	res.FalseSuspicions += n
	res.SuspicionLines = append(res.SuspicionLines, lines...)
	return Round{First: times[0].Sub(start), All: times[1].Sub(start)}, nil
}

// events is the observers' shared event delegate.
type events struct {
	victim string
	mu     sync.Mutex
	cond   *sync.Cond
	joined int
	dead   []time.Time
	other  int
}

func newEvents(victim string) *events {
	e := &events{victim: victim}
	e.cond = sync.NewCond(&e.mu)
	return e
}

func (e *events) NotifyJoin(n *memberlist.Node) {
	if n.Name != e.victim {
		return
	}
	e.mu.Lock()
	e.joined++
	e.mu.Unlock()
	e.cond.Broadcast()
}

func (e *events) NotifyLeave(n *memberlist.Node) {
	now := time.Now()
	e.mu.Lock()
	if n.Name == e.victim {
		e.dead = append(e.dead, now)
	} else {
		e.other++
	}
	e.mu.Unlock()
	e.cond.Broadcast()
}

func (e *events) NotifyUpdate(*memberlist.Node) {}

func (e *events) deadCount() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.dead)
}

func (e *events) falseDead() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.other
}

// wait blocks until cond holds (under e.mu) or timeout passes.
func (e *events) wait(timeout time.Duration, cond func() bool) bool {
	timer := time.AfterFunc(timeout, func() { e.cond.Broadcast() })
	defer timer.Stop()
	deadline := time.Now().Add(timeout)
	e.mu.Lock()
	defer e.mu.Unlock()
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		e.cond.Wait()
	}
	return true
}

func (e *events) waitJoined(n int, timeout time.Duration) error {
	if !e.wait(timeout, func() bool { return e.joined >= n }) {
		return fmt.Errorf("victim seen by %d of %d observers after %s", e.joined, n, timeout)
	}
	return nil
}

func (e *events) waitDead(n int, timeout time.Duration) ([]time.Time, error) {
	if !e.wait(timeout, func() bool { return len(e.dead) >= n }) {
		return nil, fmt.Errorf("victim declared dead by %d of %d observers within %s", len(e.dead), n, timeout)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]time.Time(nil), e.dead[:n]...), nil
}

// suspicionCounter is the io.Writer all three nodes log to; it counts
// suspicions of nodes other than the current victim, while a victim is set.
type suspicionCounter struct {
	mu     sync.Mutex
	victim string
	buf    []byte
	n      int
	lines  []string
}

func (c *suspicionCounter) setVictim(v string) {
	c.mu.Lock()
	c.victim = v
	c.mu.Unlock()
}

func (c *suspicionCounter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf = append(c.buf, p...)
	for {
		i := bytes.IndexByte(c.buf, '\n')
		if i < 0 {
			break
		}
		line := string(c.buf[:i])
		c.buf = c.buf[i+1:]
		if c.victim != "" && strings.Contains(line, "memberlist: Suspect ") && !strings.Contains(line, "Suspect "+c.victim+" ") {
			c.n++
			if len(c.lines) < 10 {
				c.lines = append(c.lines, line)
			}
		}
	}
	return len(p), nil
}

func (c *suspicionCounter) result() (int, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n, c.lines
}

// child is a re-executed copy of this binary.
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	done  chan struct{}
}

func startChild(self string, env []string, stderr io.Writer) (*child, error) {
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, stdin: stdin, done: make(chan struct{})}
	if err := waitReady(stdout, 30*time.Second); err != nil {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		return nil, err
	}
	go func() { _ = cmd.Wait(); close(c.done) }()
	return c, nil
}

// stop kills the child (frozen or not) and reaps it.
func (c *child) stop() {
	if c == nil {
		return
	}
	_ = c.stdin.Close()
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
	}
}

// cpu is the child's user+system CPU time so far, from /proc.
func (c *child) cpu() time.Duration {
	if c == nil {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// Fields after the parenthesised command: state is field 3; utime and
	// stime are fields 14 and 15, in clock ticks (100 per second on Linux).
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// SignalName is "SIGKILL", "SIGSTOP" or the signal's number.
func SignalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGSTOP:
		return "SIGSTOP"
	}
	return strconv.Itoa(int(s))
}
