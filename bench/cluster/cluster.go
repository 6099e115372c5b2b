package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// weirCluster is three (Config.Nodes) `weir serve` processes on loopback
// joined by gossip with the fast profile, every node a voter.
type weirCluster struct {
	cfg   Config
	log   *slog.Logger
	dir   string
	nodes []*node
	// meta holds one client per node, seeded with that node alone, for
	// requests pinned to it (Metadata polls on a survivor).
	meta []*kgo.Client
}

// startCluster starts the nodes of a new cluster in a fresh directory
// under cfg.TempDir named for the scenario, and waits until each is ready.
func startCluster(ctx context.Context, cfg Config, log *slog.Logger, name string) (*weirCluster, error) {
	dir, err := os.MkdirTemp(cfg.TempDir, "weir-bench-cluster-"+name+"-")
	if err != nil {
		return nil, fmt.Errorf("cluster directory: %w", err)
	}
	addrs, err := nodeAddrs(cfg)
	if err != nil {
		return nil, err
	}
	var gossip, voters []string
	for i := range cfg.Nodes {
		gossip = append(gossip, addrs[i].gossip)
		voters = append(voters, fmt.Sprint(i+1))
	}
	c := &weirCluster{cfg: cfg, log: log, dir: dir}
	for i := range cfg.Nodes {
		n := &node{
			id:     int32(i + 1),
			kafka:  addrs[i].kafka,
			gossip: gossip[i],
			wrap:   addrs[i].wrap,
			data:   filepath.Join(dir, fmt.Sprintf("node-%d", i+1)),
			logPth: filepath.Join(dir, fmt.Sprintf("node-%d.log", i+1)),
			path:   cfg.WeirPath,
			env:    cfg.WeirEnv,
		}
		n.args = append([]string{"serve",
			"--node-id", fmt.Sprint(n.id), "--data", n.data, "--listen", n.kafka,
			"--gossip-addr", n.gossip, "--join", strings.Join(gossip, ","), "--voters", strings.Join(voters, ","),
			"--gossip-profile", cfg.GossipProfile, "--log-level", "info"}, addrs[i].extra...)
		n.args = append(n.args, cfg.WeirArgs...)
		c.nodes = append(c.nodes, n)
		cl, err := kgo.NewClient(kgo.SeedBrokers(n.kafka))
		if err != nil {
			c.close()
			return nil, fmt.Errorf("client of node %d: %w", n.id, err)
		}
		c.meta = append(c.meta, cl)
	}
	if err := c.startAll(ctx); err != nil {
		c.close()
		return nil, err
	}
	log.Info("cluster started", "scenario", name, "dir", dir, "nodes", cfg.Nodes)
	return c, nil
}

// startAll starts every node at once (each --join list names nodes not up
// yet) and waits for all of them.
func (c *weirCluster) startAll(ctx context.Context) error {
	var wg sync.WaitGroup
	errs := make([]error, len(c.nodes))
	for i, n := range c.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = n.start(ctx, c.cfg.StartTimeout)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// restart starts node n again after it was killed or froze, trying up to
// three times: a start that fails (the node exits before it is ready) is
// a weir problem the round reports, not a reason to end the run. It
// returns the failures of the tries that did not succeed, and an error
// when none did.
func (c *weirCluster) restart(ctx context.Context, n *node) (problems []string, err error) {
	for try := 1; try <= 3; try++ {
		n.kill()
		err = n.start(ctx, c.cfg.StartTimeout)
		if err == nil {
			return problems, nil
		}
		problems = append(problems, fmt.Sprintf("start %d of node %d failed: %v", try, n.id, err))
		c.log.Warn("node restart failed", "node", n.id, "try", try, "err", err)
		if ctx.Err() != nil {
			break
		}
	}
	return problems, err
}

// node returns the node with id.
func (c *weirCluster) node(id int32) *node { return c.nodes[id-1] }

// seeds returns every node's Kafka address.
func (c *weirCluster) seeds() []string {
	var s []string
	for _, n := range c.nodes {
		s = append(s, n.kafka)
	}
	return s
}

// liveNode returns a running node other than those in except, preferring
// the lowest id.
func (c *weirCluster) liveNode(except ...int32) (*node, error) {
	for _, n := range c.nodes {
		skip := false
		for _, e := range except {
			skip = skip || n.id == e
		}
		if !skip && n.running() {
			return n, nil
		}
	}
	return nil, errors.New("no live node")
}

// pids returns the running nodes' process ids.
func (c *weirCluster) pids() []int {
	var out []int
	for _, n := range c.nodes {
		if pid := n.pid(); pid != 0 && n.running() {
			out = append(out, pid)
		}
	}
	return out
}

// close kills every node and, unless cfg.Keep is set, removes the
// cluster's directory (data and logs).
func (c *weirCluster) close() {
	for _, cl := range c.meta {
		cl.Close()
	}
	for _, n := range c.nodes {
		n.kill()
	}
	if !c.cfg.Keep {
		os.RemoveAll(c.dir)
	} else {
		c.log.Info("cluster kept", "dir", c.dir)
	}
}
