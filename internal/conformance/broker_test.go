package conformance

import (
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/weirmq/weir/internal/harness"
)

// brokerEnv names the variable selecting the broker under test: "weir"
// (`weir serve` through the harness) or "kfake" (franz-go's fake broker in
// process, for debugging the suite itself). Against kfake the librdkafka
// clients' gzip, snappy and lz4 variants fail: kfake's Produce range does
// not start at v0, so librdkafka 2.0.2 sends those uncompressed
// (docs/clients.md rule 1), which the batch check reports.
const brokerEnv = "WEIR_CONFORMANCE_BROKER"

// defaultBroker is the broker under test when brokerEnv is unset.
const defaultBroker = brokerWeir

const (
	brokerWeir  = "weir"
	brokerKfake = "kfake"
)

// stopTimeout bounds a clean shutdown after SIGTERM, which must take
// seconds, not minutes.
const stopTimeout = 15 * time.Second

// broker is the broker under test: one node on a loopback port with its
// data in a directory that survives Restart.
type broker interface {
	// Kind names the implementation ("weir" or "kfake").
	Kind() string
	// Addr is the bootstrap address, "127.0.0.1:port".
	Addr() string
	// Restart stops the broker cleanly and starts it again on the same
	// data directory and port, failing t if either step fails.
	Restart(t *testing.T)
}

// startBroker starts the broker that brokerEnv selects; it is stopped when
// t ends.
func startBroker(t *testing.T) broker {
	t.Helper()
	kind := os.Getenv(brokerEnv)
	if kind == "" {
		kind = defaultBroker
	}
	switch kind {
	case brokerWeir:
		return startWeir(t)
	case brokerKfake:
		return startKfake(t)
	default:
		t.Fatalf("%s=%q: want %q or %q", brokerEnv, kind, brokerWeir, brokerKfake)
		return nil
	}
}

// weirBroker is `weir serve` run by the harness.
type weirBroker struct {
	dir  string
	addr string
	proc *harness.Process
	// extra are more arguments of weir serve (the group tests add a
	// --config file).
	extra []string
}

func startWeir(t *testing.T) *weirBroker {
	t.Helper()
	b := &weirBroker{dir: t.TempDir(), addr: harness.FreeAddr(t)}
	b.start(t)
	return b
}

func (b *weirBroker) start(t *testing.T) {
	t.Helper()
	b.proc = harness.Start(t, harness.Options{
		Name:      "weir-serve",
		Args:      append([]string{"serve", "--data", b.dir, "--listen", b.addr, "--node-id", "1"}, b.extra...),
		ReadyAddr: b.addr,
	})
}

func (b *weirBroker) Kind() string { return brokerWeir }
func (b *weirBroker) Addr() string { return b.addr }

// Restart sends SIGTERM, which must end weir with status 0 within
// stopTimeout, then starts it again.
func (b *weirBroker) Restart(t *testing.T) {
	t.Helper()
	code, err := b.proc.Stop(stopTimeout)
	if err != nil {
		t.Fatalf("stop weir serve: %v", err)
	}
	if code != 0 {
		t.Errorf("weir serve exited with status %d after SIGTERM, want 0 within %v", code, stopTimeout)
	}
	b.start(t)
}

// kfakeBroker is franz-go's kfake with persistence, in process.
type kfakeBroker struct {
	dir     string
	port    int
	cluster *kfake.Cluster
}

func startKfake(t *testing.T) *kfakeBroker {
	t.Helper()
	b := &kfakeBroker{dir: t.TempDir(), port: harness.FreePort(t)}
	b.start(t)
	return b
}

func (b *kfakeBroker) start(t *testing.T) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.Ports(b.port), kfake.NumBrokers(1), kfake.DataDir(b.dir))
	if err != nil {
		t.Fatalf("start kfake on port %d: %v", b.port, err)
	}
	t.Cleanup(c.Close)
	b.cluster = c
}

func (b *kfakeBroker) Kind() string { return brokerKfake }
func (b *kfakeBroker) Addr() string { return harness.Addr(b.port) }

// Restart closes the cluster, which persists its state, and opens it again.
func (b *kfakeBroker) Restart(t *testing.T) {
	t.Helper()
	b.cluster.Close()
	b.start(t)
}
