package cluster

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// natsChildEnv, set in a child's environment, makes ServeNATSChild run a
// NATS server with the options it holds (JSON of natsSpec).
const natsChildEnv = "WEIR_BENCH_NATS_SERVER"

// natsSpec is one NATS server of the reference cluster.
type natsSpec struct {
	Name        string
	ClientPort  int
	ClusterPort int
	MonitorPort int
	StoreDir    string
	Routes      []string
	// SyncAlways fsyncs every write before it is acknowledged (the
	// server's sync_interval "always"); off, JetStream's default of an
	// fsync every 2 minutes.
	SyncAlways bool
}

// ServeNATSChild runs the NATS server this process was re-executed for
// (see Config.NATSExec) until stdin closes, and reports handled; in any
// other process it returns at once with handled false. Call it first in
// the program's main path (or TestMain), and end the process when it
// handled the call.
func ServeNATSChild(stdin io.Reader, stdout io.Writer) (handled bool, err error) {
	v := os.Getenv(natsChildEnv)
	if v == "" {
		return false, nil
	}
	var spec natsSpec
	if err := json.Unmarshal([]byte(v), &spec); err != nil {
		return true, fmt.Errorf("%s: %w", natsChildEnv, err)
	}
	s, err := server.NewServer(&server.Options{
		ServerName: spec.Name,
		Host:       "127.0.0.1",
		Port:       spec.ClientPort,
		HTTPHost:   "127.0.0.1",
		HTTPPort:   spec.MonitorPort,
		NoLog:      true,
		NoSigs:     true,
		JetStream:  true,
		StoreDir:   spec.StoreDir,
		SyncAlways: spec.SyncAlways,
		Cluster:    server.ClusterOpts{Name: "bench", Host: "127.0.0.1", Port: spec.ClusterPort},
		Routes:     server.RoutesFromStr(strings.Join(spec.Routes, ",")),
	})
	if err != nil {
		return true, fmt.Errorf("nats server %s: %w", spec.Name, err)
	}
	s.Start()
	if !s.ReadyForConnections(time.Minute) {
		s.Shutdown()
		return true, fmt.Errorf("nats server %s not ready", spec.Name)
	}
	fmt.Fprintln(stdout, "ready")
	// SIGTERM shuts the server down as nats-server's own binary does; a
	// closed stdin (the parent's clean close) too.
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	defer signal.Stop(term)
	eof := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, stdin)
		close(eof)
	}()
	select {
	case <-eof:
	case <-term:
	}
	s.Shutdown()
	s.WaitForShutdown()
	return true, nil
}

// natsCluster is a 3-server NATS cluster with JetStream (file storage) on
// loopback ports, each server a child process running nats-server from
// its Go module (this program re-executed, Config.NATSExec), so that a
// server can be SIGKILLed as a weir node is.
type natsCluster struct {
	exec  []string
	specs []natsSpec
	procs []*natsProc // nil while down; mu guards the entries
	dir   string
	mu    sync.Mutex
}

// proc is server i's process, nil while down.
func (nc *natsCluster) proc(i int) *natsProc {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	return nc.procs[i]
}

// setProc sets server i's process.
func (nc *natsCluster) setProc(i int, p *natsProc) {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	nc.procs[i] = p
}

// natsProc is one running NATS child.
type natsProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	exited chan struct{}
}

// startNATS starts n servers and waits until each accepts clients.
func startNATS(execArgs []string, dir string, n int, timeout time.Duration) (*natsCluster, error) {
	nc, err := newNATSCluster(execArgs, dir, n)
	if err != nil {
		return nil, err
	}
	if err := nc.startAll(timeout); err != nil {
		return nil, err
	}
	return nc, nil
}

// newNATSCluster picks the ports of n servers, none started yet.
func newNATSCluster(execArgs []string, dir string, n int) (*natsCluster, error) {
	if len(execArgs) == 0 {
		return nil, errors.New("no command to run the NATS servers (Config.NATSExec)")
	}
	addrs, err := freeLoopbackAddrs(3 * n)
	if err != nil {
		return nil, err
	}
	nc := &natsCluster{exec: execArgs, dir: dir, procs: make([]*natsProc, n)}
	var routes []string
	for i := range n {
		routes = append(routes, "nats://"+addrs[3*i+1])
	}
	for i := range n {
		nc.specs = append(nc.specs, natsSpec{Name: fmt.Sprintf("n%d", i+1), ClientPort: portOf(addrs[3*i]),
			ClusterPort: portOf(addrs[3*i+1]), MonitorPort: portOf(addrs[3*i+2]), StoreDir: filepath.Join(dir, fmt.Sprintf("n%d", i+1)), Routes: routes})
	}
	return nc, nil
}

// startAll starts every server in turn; on an error it closes those
// started.
func (nc *natsCluster) startAll(timeout time.Duration) error {
	for i := range nc.specs {
		if err := nc.start(i, timeout); err != nil {
			nc.close()
			return err
		}
	}
	return nil
}

func portOf(addr string) int {
	_, p, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(p)
	return n
}

// start starts server i (again) with the same ports and store, and waits
// for its ready line.
func (nc *natsCluster) start(i int, timeout time.Duration) error {
	spec, err := json.Marshal(nc.specs[i])
	if err != nil {
		return err
	}
	cmd := exec.Command(nc.exec[0], nc.exec[1:]...)
	cmd.Env = append(os.Environ(), natsChildEnv+"="+string(spec))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("nats server %d: %w", i+1, err)
	}
	p := &natsProc{cmd: cmd, stdin: stdin, exited: make(chan struct{})}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		isReady := false
		for sc.Scan() {
			if !isReady && sc.Text() == "ready" {
				isReady = true
				close(ready)
			}
		}
	}()
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	select {
	case <-ready:
	case <-p.exited:
		return fmt.Errorf("nats server %d exited before it was ready: %s", i+1, stderr.String())
	case <-time.After(timeout):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-p.exited
		return fmt.Errorf("nats server %d not ready after %v", i+1, timeout)
	}
	nc.setProc(i, p)
	return nil
}

// kill SIGKILLs server i and waits until it was reaped.
func (nc *natsCluster) kill(i int) {
	p := nc.proc(i)
	nc.setProc(i, nil)
	if p == nil {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.exited
}

// pids returns the running servers' process ids.
func (nc *natsCluster) pids() []int {
	var out []int
	for _, p := range nc.procs {
		if p != nil {
			out = append(out, p.cmd.Process.Pid)
		}
	}
	return out
}

// url returns server i's client URL.
func (nc *natsCluster) url(i int) string {
	return fmt.Sprintf("nats://127.0.0.1:%d", nc.specs[i].ClientPort)
}

// urls returns every server's client URL, comma-separated.
func (nc *natsCluster) urls() string {
	var u []string
	for i := range nc.specs {
		u = append(u, nc.url(i))
	}
	return strings.Join(u, ",")
}

// streamLeader returns the index of the server leading stream as the
// stream's info says (asked through js, bounded by timeout), or -1.
func (nc *natsCluster) streamLeader(ctx context.Context, js jetstream.JetStream, stream string, timeout time.Duration) int {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	st, err := js.Stream(cctx, stream)
	if err != nil {
		return -1
	}
	info := st.CachedInfo()
	if info.Cluster == nil {
		return -1
	}
	for i, s := range nc.specs {
		if s.Name == info.Cluster.Leader && nc.procs[i] != nil {
			return i
		}
	}
	return -1
}

func (nc *natsCluster) close() {
	for i, p := range nc.procs {
		if p != nil {
			_ = p.stdin.Close() // a clean shutdown
			select {
			case <-p.exited:
			case <-time.After(10 * time.Second):
			}
			nc.kill(i)
		}
	}
}

// createStream creates an R3 file stream on subject, retrying while the
// JetStream cluster elects its meta leader, and waits until it has a
// leader with every replica current.
func (nc *natsCluster) createStream(ctx context.Context, name, subject string, timeout time.Duration) error {
	conn, err := nats.Connect(nc.urls())
	if err != nil {
		return fmt.Errorf("nats connect: %w", err)
	}
	defer conn.Close()
	js, err := jetstream.New(conn)
	if err != nil {
		return err
	}
	_, err = pollUntil(ctx, timeout, 200*time.Millisecond, "NATS stream "+name+" created", func(ctx context.Context) (bool, error) {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_, err := js.CreateOrUpdateStream(cctx, jetstream.StreamConfig{
			Name: name, Subjects: []string{subject}, Replicas: 3, Storage: jetstream.FileStorage,
		})
		return err == nil, err
	})
	if err != nil {
		return err
	}
	return nc.waitCurrent(ctx, js, name, timeout)
}

// waitCurrent waits until stream has a leader and two current replicas.
func (nc *natsCluster) waitCurrent(ctx context.Context, js jetstream.JetStream, name string, timeout time.Duration) error {
	_, err := pollUntil(ctx, timeout, 50*time.Millisecond, "NATS stream "+name+" current on every replica", func(ctx context.Context) (bool, error) {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		st, err := js.Stream(cctx, name)
		if err != nil {
			return false, err
		}
		info, err := st.Info(cctx)
		if err != nil {
			return false, err
		}
		if info.Cluster == nil || info.Cluster.Leader == "" || len(info.Cluster.Replicas) != 2 {
			return false, nil
		}
		for _, p := range info.Cluster.Replicas {
			if !p.Current || p.Offline {
				return false, nil
			}
		}
		return true, nil
	})
	return err
}

// publishAsync publishes records messages of size bytes to subject as
// fast as JetStream's async publishing goes (nats.go's default of 4,000
// acks outstanding) and returns the time from the first publish to the
// last ack.
func (nc *natsCluster) publishAsync(ctx context.Context, subject string, records int64, size int) (time.Duration, error) {
	conn, err := nats.Connect(nc.urls())
	if err != nil {
		return 0, fmt.Errorf("nats connect: %w", err)
	}
	defer conn.Close()
	var mu sync.Mutex
	var failed int64
	var firstErr error
	js, err := jetstream.New(conn, jetstream.WithPublishAsyncErrHandler(func(_ jetstream.JetStream, _ *nats.Msg, err error) {
		mu.Lock()
		defer mu.Unlock()
		failed++
		if firstErr == nil {
			firstErr = err
		}
	}))
	if err != nil {
		return 0, err
	}
	value := make([]byte, size)
	start := time.Now()
	for sent := int64(0); sent < records; {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if _, err := js.PublishAsync(subject, value); err != nil {
			if errors.Is(err, jetstream.ErrTooManyStalledMsgs) {
				continue // the window is full: try again
			}
			return 0, fmt.Errorf("nats publish: %w", err)
		}
		sent++
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(60 * time.Second):
		return 0, fmt.Errorf("nats: %d acks outstanding after 60s", js.PublishAsyncPending())
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	elapsed := time.Since(start)
	mu.Lock()
	defer mu.Unlock()
	if failed > 0 {
		return elapsed, fmt.Errorf("nats: %d of %d publishes failed, the first with: %w", failed, records, firstErr)
	}
	return elapsed, nil
}

// purge empties stream between throughput runs.
func (nc *natsCluster) purge(ctx context.Context, name string) error {
	conn, err := nats.Connect(nc.urls())
	if err != nil {
		return err
	}
	defer conn.Close()
	js, err := jetstream.New(conn)
	if err != nil {
		return err
	}
	st, err := js.Stream(ctx, name)
	if err != nil {
		return err
	}
	return st.Purge(ctx)
}

// natsPublisher publishes one message at a time, each waiting for its ack
// (nats.go's jetstream Publish at its defaults: 5 s timeout, 2 retries
// 250 ms apart on "no responders"), one every interval, through one server.
type natsPublisher struct {
	conn   *nats.Conn
	log    *ackLog
	cancel context.CancelFunc
	done   chan struct{}
}

func startNATSPublisher(url, subject string, every, minGap time.Duration) (*natsPublisher, error) {
	conn, err := nats.Connect(url)
	if err != nil {
		return nil, fmt.Errorf("nats connect: %w", err)
	}
	js, err := jetstream.New(conn)
	if err != nil {
		conn.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &natsPublisher{conn: conn, log: newAckLog(1, minGap), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		value := make([]byte, recordBytes)
		next := time.Now()
		for ctx.Err() == nil {
			if _, err := js.Publish(ctx, subject, value); err == nil {
				p.log.ack(0, time.Now())
			} else if ctx.Err() == nil {
				p.log.count(0, 1, 0)
			}
			next = next.Add(every)
			if d := time.Until(next); d > 0 {
				_ = sleepCtx(ctx, d)
			} else {
				next = time.Now()
			}
		}
	}()
	return p, nil
}

func (p *natsPublisher) stop() {
	p.cancel()
	<-p.done
	p.conn.Close()
}

// NATSRound is one NATS failover: the stream leader's server SIGKILLed.
type NATSRound struct {
	// Victim is the index (0-based) of the server SIGKILLed.
	Victim int
	// Election runs from the kill until the stream's info (asked through
	// a survivor every Config.PollEvery) names a live leader; -1 when not
	// within Config.RoundTimeout.
	Election time.Duration
	// Stall is the publisher's longest gap between acknowledgements.
	Stall time.Duration
	// Stuck is set when no publish succeeded within Config.RoundTimeout.
	Stuck bool
	// Problems describes what went wrong.
	Problems []string
}

// NATSFailoverResult is the NATS failover reference.
type NATSFailoverResult struct {
	Version string
	Rounds  []NATSRound
	Failed  int64 // publishes that returned an error (retried by the loop)
}

const natsFailStream, natsFailSubject = "FAIL", "fail"

// runNATSFailover SIGKILLs the stream leader's server Config.NATSKills
// times, restarting it after each round.
func (r *runner) runNATSFailover(ctx context.Context, nc *natsCluster) (*NATSFailoverResult, error) {
	cfg := r.cfg
	res := &NATSFailoverResult{Version: "nats-server " + moduleVersion("github.com/nats-io/nats-server/v2")}
	if err := nc.createStream(ctx, natsFailStream, natsFailSubject, cfg.StartTimeout); err != nil {
		return res, err
	}
	for i := range cfg.NATSKills {
		rd, err := r.natsRound(ctx, nc, res)
		res.Rounds = append(res.Rounds, rd)
		r.log.Info("nats failover round", "round", i+1, "of", cfg.NATSKills, "victim", rd.Victim,
			"election", rd.Election, "stall", rd.Stall, "problems", len(rd.Problems))
		if err != nil {
			return res, fmt.Errorf("NATS round %d: %w", i+1, err)
		}
	}
	return res, nil
}

func (r *runner) natsRound(ctx context.Context, nc *natsCluster, res *NATSFailoverResult) (NATSRound, error) {
	cfg := r.cfg
	rd := NATSRound{Election: -1}
	ctl, err := nats.Connect(nc.urls())
	if err != nil {
		return rd, err
	}
	defer ctl.Close()
	js, err := jetstream.New(ctl)
	if err != nil {
		return rd, err
	}
	// The publisher and the leader polls go through a server that
	// survives, so the stall is the stream's failover alone, not a client
	// reconnect. The leader is checked again once the publisher runs, as
	// it may have moved meanwhile.
	var victim int
	var pub *natsPublisher
	var pjs jetstream.JetStream
	for try := 0; ; try++ {
		if _, err := pollUntil(ctx, cfg.RoundTimeout, cfg.PollEvery, "a NATS stream leader", func(ctx context.Context) (bool, error) {
			victim = nc.streamLeader(ctx, js, natsFailStream, time.Second)
			return victim >= 0, nil
		}); err != nil {
			return rd, err
		}
		survivor := (victim + 1) % len(nc.specs)
		pub, err = startNATSPublisher(nc.url(survivor), natsFailSubject, cfg.ProduceEvery, 5*cfg.ProduceEvery)
		if err != nil {
			return rd, err
		}
		poll, err := nats.Connect(nc.url(survivor))
		if err != nil {
			pub.stop()
			return rd, err
		}
		defer poll.Close()
		if pjs, err = jetstream.New(poll); err != nil {
			pub.stop()
			return rd, err
		}
		steady := time.Now()
		if _, err := pollUntil(ctx, cfg.RoundTimeout, 10*time.Millisecond, "NATS publisher acknowledged", func(context.Context) (bool, error) {
			return pub.log.ackedAllSince(steady.Add(200 * time.Millisecond)), nil
		}); err != nil {
			pub.stop()
			return rd, err
		}
		if nc.streamLeader(ctx, pjs, natsFailStream, time.Second) == victim {
			break
		}
		pub.stop()
		if try == 4 {
			return rd, errors.New("the NATS stream leader kept moving")
		}
	}
	rd.Victim = victim
	killed := time.Now()
	nc.kill(victim)
	// A publish answered just before the kill may be acknowledged just
	// after it: only acknowledgements after the new leader count as the
	// publisher's recovery.
	recovered := killed
	if led, err := pollUntil(ctx, cfg.RoundTimeout, cfg.PollEvery, "a new NATS stream leader", func(ctx context.Context) (bool, error) {
		return nc.streamLeader(ctx, pjs, natsFailStream, 200*time.Millisecond) >= 0, nil
	}); err == nil {
		rd.Election = led.Sub(killed)
		recovered = led
	} else {
		rd.Problems = append(rd.Problems, err.Error())
	}
	if _, err := pollUntil(ctx, cfg.RoundTimeout, 10*time.Millisecond, "NATS publisher acknowledged after the kill", func(context.Context) (bool, error) {
		return pub.log.ackedAllSince(recovered), nil
	}); err != nil {
		rd.Problems = append(rd.Problems, err.Error())
	}
	end := time.Now()
	pub.stop()
	s := pub.log.stallIn(killed, end, stallFloor)
	rd.Stall, rd.Stuck = s.longest, len(s.stuck) > 0
	_, failed, _ := pub.log.totals()
	res.Failed += failed
	if err := nc.start(victim, cfg.StartTimeout); err != nil {
		return rd, err
	}
	if err := nc.waitCurrent(ctx, js, natsFailStream, cfg.StartTimeout); err != nil {
		return rd, err
	}
	return rd, sleepCtx(ctx, cfg.Settle)
}

// natsDir makes the directory of the in-process NATS servers' stores.
func natsDir(parent string) (string, error) {
	return os.MkdirTemp(parent, "weir-bench-nats-")
}
