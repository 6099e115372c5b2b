package chaos

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirmq/weir/internal/harness"
)

// Timeouts of the node operations. They are bounds, not delays: each wait
// ends as soon as its condition holds.
const (
	// readyTimeout bounds a node's start (or restart) until it serves.
	readyTimeout = 90 * time.Second
	// stopTimeout bounds a controlled shutdown (SIGTERM) before SIGKILL.
	stopTimeout = 60 * time.Second
	// bindRetries is how often a restart is tried again when the node
	// exits at once because its fixed port is still taken.
	bindRetries = 5
)

// Options shape a test cluster.
type Options struct {
	// Configs are broker configs (server.properties entries) every node
	// gets, e.g. replica.lag.time.max.ms; the harness's own flags
	// (addresses, node id, voters, gossip profile) override them.
	Configs map[string]string
	// Args are extra `weir serve` arguments for every node.
	Args []string
	// Learners is how many of the nodes, the highest ids, are left out of
	// --voters: metadata quorum learners. The rest are the voters.
	Learners int
}

// State is what a node is doing, as the harness left it.
type State int

// The states of a node.
const (
	// Down: not running (killed, stopped, or not restarted yet).
	Down State = iota
	// Up: running.
	Up
	// Paused: running but stopped with SIGSTOP.
	Paused
)

func (s State) String() string {
	switch s {
	case Up:
		return "up"
	case Paused:
		return "paused"
	}
	return "down"
}

// Cluster is a running cluster of `weir serve` processes. Every node has a
// fixed Kafka port, gossip port and data directory, so a restarted node
// comes back at the same addresses with its data. All processes are
// killed when the test ends. Methods are safe for concurrent use, but the
// fault methods (Kill, Stop, Pause, Resume, Restart) are meant to be
// called from the test's goroutine: they fail the test on error.
type Cluster struct {
	t      testing.TB
	opts   Options
	config string // the server.properties file every node reads

	mu    sync.Mutex
	nodes map[int32]*node
	procs []*harness.Process // every process started, in order
}

// LogsEnv names an environment variable: when it names a directory and a
// test fails, every node process's whole output is written there, one
// file per process start.
const LogsEnv = "WEIR_CHAOS_LOGS"

// node is one node's slot.
type node struct {
	id     int32
	kafka  string // Kafka listener, 127.0.0.1:port
	gossip string // gossip address, 127.0.0.1:port
	dir    string // data directory
	proc   *harness.Process
	state  State
	starts int // how many times it was started
	admin  *kgo.Client
}

// StartCluster starts n `weir serve` processes that form one cluster
// (node ids 1..n, the same --join list and --voters on every node: all
// ids but the Options.Learners highest, --gossip-profile relaxed) and
// waits until every node serves. It fails
// the test on error.
func StartCluster(t testing.TB, n int, opts Options) *Cluster {
	t.Helper()
	if n < 1 || opts.Learners < 0 || opts.Learners >= n {
		t.Fatalf("chaos: StartCluster: %d nodes, %d of them learners", n, opts.Learners)
	}
	if _, err := harness.BuildWeir(); err != nil {
		t.Fatal(err)
	}
	ports, err := fixedPorts(2 * n)
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{t: t, opts: opts, nodes: map[int32]*node{}}
	c.config = filepath.Join(t.TempDir(), "server.properties")
	if err := writeProperties(c.config, opts.Configs); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		id := int32(i + 1)
		c.nodes[id] = &node{id: id, gossip: harness.Addr(ports[2*i]), kafka: harness.Addr(ports[2*i+1]), dir: t.TempDir()}
	}
	t.Cleanup(c.closeAdmins)
	t.Cleanup(c.saveLogs)
	for _, id := range c.IDs() {
		if err := c.spawn(id); err != nil {
			t.Fatal(err)
		}
	}
	// The nodes start together, as a cluster's processes do: each waits
	// for a quorum of voters before it serves.
	for _, id := range c.IDs() {
		if err := c.waitReady(id); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// writeProperties writes configs as a server.properties file.
func writeProperties(path string, configs map[string]string) error {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(configs)) {
		fmt.Fprintf(&b, "%s=%s\n", k, configs[k])
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("chaos: write %s: %w", path, err)
	}
	return nil
}

// IDs returns the node ids, ascending.
func (c *Cluster) IDs() []int32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Sorted(maps.Keys(c.nodes))
}

// Addr returns node id's Kafka address (fixed across restarts).
func (c *Cluster) Addr(id int32) string { return c.slot(id).kafka }

// Bootstrap returns every node's Kafka address, for a client's seed
// brokers: clients are expected to cope with the ones that are down.
func (c *Cluster) Bootstrap() []string {
	var out []string
	for _, id := range c.IDs() {
		out = append(out, c.Addr(id))
	}
	return out
}

// LiveAddrs returns the Kafka addresses of the nodes that are up.
func (c *Cluster) LiveAddrs() []string {
	var out []string
	for _, id := range c.Live() {
		out = append(out, c.Addr(id))
	}
	return out
}

// State returns what node id is doing.
func (c *Cluster) State(id int32) State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nodes[id].state
}

// Live returns the ids of the nodes that are up (neither down nor paused).
func (c *Cluster) Live() []int32 {
	var out []int32
	for _, id := range c.IDs() {
		if c.State(id) == Up {
			out = append(out, id)
		}
	}
	return out
}

// Process returns node id's current process (nil before its first start).
func (c *Cluster) Process(id int32) *harness.Process {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nodes[id].proc
}

func (c *Cluster) slot(id int32) *node {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, ok := c.nodes[id]
	if !ok {
		c.t.Fatalf("chaos: no node %d", id)
	}
	return n
}

// Kill sends SIGKILL to node id's process group and waits until it is
// reaped.
func (c *Cluster) Kill(id int32) {
	c.t.Helper()
	n := c.slot(id)
	if n.proc == nil || c.State(id) == Down {
		c.t.Fatalf("chaos: kill node %d: it is down", id)
	}
	if err := n.proc.Kill(); err != nil {
		c.t.Fatalf("chaos: kill node %d: %v", id, err)
	}
	c.setState(id, Down)
}

// Stop sends SIGTERM to node id (a controlled shutdown), waits until it
// exits (SIGKILL after a minute) and returns its exit status.
func (c *Cluster) Stop(id int32) int {
	c.t.Helper()
	n := c.slot(id)
	if n.proc == nil || c.State(id) == Down {
		c.t.Fatalf("chaos: stop node %d: it is down", id)
	}
	if c.State(id) == Paused {
		c.Resume(id)
	}
	code, err := n.proc.Stop(stopTimeout)
	if err != nil {
		c.t.Fatalf("chaos: stop node %d: %v", id, err)
	}
	c.setState(id, Down)
	return code
}

// Pause freezes node id with SIGSTOP: its sockets stay open, it answers
// nothing.
func (c *Cluster) Pause(id int32) {
	c.t.Helper()
	c.signal(id, syscall.SIGSTOP, Up)
	c.setState(id, Paused)
}

// Resume lets a paused node run again (SIGCONT).
func (c *Cluster) Resume(id int32) {
	c.t.Helper()
	c.signal(id, syscall.SIGCONT, Paused)
	c.setState(id, Up)
}

func (c *Cluster) signal(id int32, sig syscall.Signal, want State) {
	c.t.Helper()
	if got := c.State(id); got != want {
		c.t.Fatalf("chaos: %v to node %d: it is %v, not %v", sig, id, got, want)
	}
	if err := c.slot(id).proc.Signal(sig); err != nil {
		c.t.Fatalf("chaos: node %d: %v", id, err)
	}
}

// Restart starts node id again, on its data directory and addresses, and
// waits until it serves.
func (c *Cluster) Restart(id int32) {
	c.t.Helper()
	if got := c.State(id); got != Down {
		c.t.Fatalf("chaos: restart node %d: it is %v", id, got)
	}
	var err error
	for range bindRetries {
		if err = c.spawn(id); err != nil {
			break
		}
		if err = c.waitReady(id); err == nil || !strings.Contains(err.Error(), "address already in use") {
			break
		}
		c.setState(id, Down)
	}
	if err != nil {
		c.t.Fatal(err)
	}
}

// spawn starts node id's process.
func (c *Cluster) spawn(id int32) error {
	n := c.slot(id)
	var joins, voters []string
	for _, v := range c.IDs() {
		joins = append(joins, c.slot(v).gossip)
	}
	// The highest Learners ids are learners (Options.Learners).
	ids := c.IDs()
	for _, v := range ids[:len(ids)-c.opts.Learners] {
		voters = append(voters, strconv.Itoa(int(v)))
	}
	args := append([]string{"serve", "--config", c.config,
		"--node-id", strconv.Itoa(int(id)), "--data", n.dir, "--listen", n.kafka,
		"--gossip-addr", n.gossip, "--join", strings.Join(joins, ","), "--voters", strings.Join(voters, ","),
		"--gossip-profile", "relaxed"}, c.opts.Args...)
	c.mu.Lock()
	n.starts++
	name := fmt.Sprintf("weir-node-%d", id)
	if n.starts > 1 {
		name = fmt.Sprintf("weir-node-%d-start-%d", id, n.starts)
	}
	c.mu.Unlock()
	p, err := harness.Spawn(c.t, harness.Options{Args: args, Name: name, ReadyLine: `weir serving node \d+ on`})
	if err != nil {
		return fmt.Errorf("chaos: start node %d: %w", id, err)
	}
	c.mu.Lock()
	n.proc, n.state = p, Up
	c.procs = append(c.procs, p)
	c.mu.Unlock()
	return nil
}

// waitReady waits until node id's process printed its serving line.
func (c *Cluster) waitReady(id int32) error {
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	if err := c.Process(id).WaitReady(ctx); err != nil {
		if errors.Is(err, harness.ErrExited) {
			c.setState(id, Down)
		}
		return fmt.Errorf("chaos: node %d: %w", id, err)
	}
	return nil
}

func (c *Cluster) setState(id int32, s State) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nodes[id].state = s
}

// closeAdmins closes the per-node admin clients.
func (c *Cluster) closeAdmins() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.nodes {
		if n.admin != nil {
			n.admin.Close()
			n.admin = nil
		}
	}
}

// saveLogs writes every process's output to $WEIR_CHAOS_LOGS when the
// test failed. It runs after the processes were killed.
func (c *Cluster) saveLogs() {
	dir := os.Getenv(LogsEnv)
	if dir == "" || !c.t.Failed() {
		return
	}
	c.mu.Lock()
	procs := slices.Clone(c.procs)
	c.mu.Unlock()
	prefix := strings.NewReplacer("/", "_", " ", "_").Replace(c.t.Name())
	for _, p := range procs {
		path := filepath.Join(dir, prefix+"-"+p.Name()+".log")
		out := "--- stdout\n" + p.Stdout() + "--- stderr\n" + p.Stderr()
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			c.t.Logf("chaos: %v", err)
			continue
		}
		c.t.Logf("chaos: %s's output is in %s", p.Name(), path)
	}
}
