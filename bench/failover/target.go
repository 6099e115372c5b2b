package failover

import (
	"context"
	"syscall"
	"time"

	"github.com/weirmq/weir/bench/cluster"
)

// target is the cluster the rounds run against: a weir cluster this
// package started (*cluster.Nodes) or an external one driven by the
// user's commands (*external). Node ids are the brokers' ids.
type target interface {
	IDs() []int32
	Seeds() []string
	// Running reports whether the node was not stopped by a fault.
	Running(id int32) bool
	// Signal delivers a fault: SIGKILL and SIGTERM stop the node,
	// SIGSTOP pauses it, SIGCONT resumes it.
	Signal(id int32, sig syscall.Signal) error
	// Kill waits until a SIGKILLed node is gone.
	Kill(id int32)
	// Start starts a stopped node and waits until it serves.
	Start(ctx context.Context, id int32) (problems []string, err error)
	// WaitExited waits until a SIGTERMed node is gone.
	WaitExited(ctx context.Context, id int32, timeout time.Duration) error
	LiveNode(except ...int32) (int32, error)
	Metadata(ctx context.Context, via int32, topics []string) ([]cluster.PartitionState, error)
	QuorumLeader(ctx context.Context, via int32) (int32, error)
	WaitInSync(ctx context.Context, topics []string, want int, timeout time.Duration) (time.Time, error)
	CreateTopics(ctx context.Context, names []string, partitions int32, rf int16, configs map[string]*string) error
	Close()
}

var _ target = (*cluster.Nodes)(nil)
