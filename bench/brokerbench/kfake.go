package brokerbench

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kfake"
)

// broker is one running broker under measurement.
type broker interface {
	// Addr is its Kafka listener, host:port.
	Addr() string
	// PID is the broker's own process id, or 0 when it runs inside this
	// process (its memory cannot be told apart from the client's).
	PID() int
	// Close stops the broker; its data directory is removed by the
	// caller.
	Close() error
}

// kfakeBroker is franz-go's kfake, one broker in this process, persisting
// to a data directory.
type kfakeBroker struct {
	c    *kfake.Cluster
	addr string
}

// startKfake starts a one-broker kfake cluster on a free loopback port,
// persisting to dir, fsyncing every batch when sync is set.
func startKfake(dir string, sync bool) (*kfakeBroker, error) {
	opts := []kfake.Opt{kfake.Ports(0), kfake.DataDir(dir)}
	if sync {
		opts = append(opts, kfake.SyncWrites())
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("start kfake in %s: %w", dir, err)
	}
	addrs := c.ListenAddrs()
	if len(addrs) != 1 {
		c.Close()
		return nil, fmt.Errorf("start kfake: %d listeners, want 1", len(addrs))
	}
	return &kfakeBroker{c: c, addr: addrs[0]}, nil
}

func (k *kfakeBroker) Addr() string { return k.addr }
func (k *kfakeBroker) PID() int     { return 0 }

// Close stops kfake, which writes its state to its directory first; it
// may be called more than once.
func (k *kfakeBroker) Close() error {
	k.c.Close()
	return nil
}
