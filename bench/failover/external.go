package failover

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/weirmq/weir/bench/cluster"
)

// External names an existing Kafka-compatible cluster and the commands
// that stop, start, pause and resume one of its brokers. In each command
// {node} stands for the broker's id and {addr} for its host:port; the
// commands run under /bin/sh -c and must return once done (a start
// command may leave the broker starting: the tool waits until it
// answers). Nothing weir-specific is assumed.
type External struct {
	Brokers                                []string
	StopCmd, StartCmd, PauseCmd, ResumeCmd string
}

// external is a target driven by External's commands.
type external struct {
	cfg     External
	timeout time.Duration

	ids   []int32
	addr  map[int32]string
	pin   map[int32]*kgo.Client // seeded with that broker alone
	admin *kgo.Client

	mu   sync.Mutex
	down map[int32]bool
}

// newExternal reads the brokers from the cluster's Metadata.
func newExternal(ctx context.Context, cfg External, timeout time.Duration) (*external, error) {
	admin, err := kgo.NewClient(kgo.SeedBrokers(cfg.Brokers...))
	if err != nil {
		return nil, fmt.Errorf("external cluster: %w", err)
	}
	e := &external{cfg: cfg, timeout: timeout, admin: admin, addr: map[int32]string{}, pin: map[int32]*kgo.Client{}, down: map[int32]bool{}}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := kmsg.NewPtrMetadataRequest().RequestWith(rctx, admin)
	if err != nil {
		admin.Close()
		return nil, fmt.Errorf("external cluster: metadata: %w", err)
	}
	for _, b := range resp.Brokers {
		a := net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))
		cl, err := kgo.NewClient(kgo.SeedBrokers(a))
		if err != nil {
			e.Close()
			return nil, fmt.Errorf("external cluster: client of broker %d: %w", b.NodeID, err)
		}
		e.ids, e.addr[b.NodeID], e.pin[b.NodeID] = append(e.ids, b.NodeID), a, cl
	}
	slices.Sort(e.ids)
	if len(e.ids) == 0 {
		e.Close()
		return nil, errors.New("external cluster: metadata names no broker")
	}
	return e, nil
}

func (e *external) IDs() []int32    { return slices.Clone(e.ids) }
func (e *external) Seeds() []string { return slices.Clone(e.cfg.Brokers) }

func (e *external) Running(id int32) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return !e.down[id]
}

// run runs one of the commands for broker id.
func (e *external) run(ctx context.Context, what, cmd string, id int32) error {
	if cmd == "" {
		return fmt.Errorf("external cluster: no %s command", what)
	}
	line := strings.NewReplacer("{node}", strconv.Itoa(int(id)), "{addr}", e.addr[id]).Replace(cmd)
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "/bin/sh", "-c", line).CombinedOutput()
	if err != nil {
		return fmt.Errorf("external cluster: %s command %q: %w: %s", what, line, err, strings.TrimSpace(string(out)))
	}
	return nil
}

func (e *external) Signal(id int32, sig syscall.Signal) error {
	ctx := context.Background()
	switch sig {
	case syscall.SIGKILL, syscall.SIGTERM:
		e.mu.Lock()
		e.down[id] = true
		e.mu.Unlock()
		return e.run(ctx, "stop", e.cfg.StopCmd, id)
	case syscall.SIGSTOP:
		return e.run(ctx, "pause", e.cfg.PauseCmd, id)
	case syscall.SIGCONT:
		return e.run(ctx, "resume", e.cfg.ResumeCmd, id)
	}
	return fmt.Errorf("external cluster: no command for %v", sig)
}

// Kill does nothing: the stop command returns once the broker is gone.
func (e *external) Kill(int32) {}

// WaitExited does nothing, as Kill.
func (e *external) WaitExited(context.Context, int32, time.Duration) error { return nil }

func (e *external) Start(ctx context.Context, id int32) ([]string, error) {
	if err := e.run(ctx, "start", e.cfg.StartCmd, id); err != nil {
		return nil, err
	}
	_, err := cluster.PollUntil(ctx, e.timeout, 50*time.Millisecond, fmt.Sprintf("broker %d answering", id), func(ctx context.Context) (bool, error) {
		_, err := e.pinned(ctx, id, kmsg.NewPtrMetadataRequest())
		return err == nil, err
	})
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.down[id] = false
	e.mu.Unlock()
	return nil, nil
}

func (e *external) LiveNode(except ...int32) (int32, error) {
	for _, id := range e.ids {
		if !slices.Contains(except, id) && e.Running(id) {
			return id, nil
		}
	}
	return -1, errors.New("external cluster: no live broker")
}

// pinned sends req to broker id alone, bounded by a second.
func (e *external) pinned(ctx context.Context, id int32, req kmsg.Request) (kmsg.Response, error) {
	cl := e.pin[id]
	if cl == nil {
		return nil, fmt.Errorf("external cluster: no broker %d", id)
	}
	seeds := cl.SeedBrokers()
	rctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	resp, err := seeds[0].RetriableRequest(rctx, req)
	if err != nil {
		return nil, fmt.Errorf("%s to broker %d: %w", kmsg.NameForKey(req.Key()), id, err)
	}
	return resp, nil
}

func (e *external) Metadata(ctx context.Context, via int32, topics []string) ([]cluster.PartitionState, error) {
	req := kmsg.NewPtrMetadataRequest()
	for _, t := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(t)
		req.Topics = append(req.Topics, rt)
	}
	resp, err := e.pinned(ctx, via, req)
	if err != nil {
		return nil, err
	}
	var out []cluster.PartitionState
	for _, t := range resp.(*kmsg.MetadataResponse).Topics {
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return nil, fmt.Errorf("metadata of a topic from broker %d: %w", via, err)
		}
		for _, p := range t.Partitions {
			leader := p.Leader
			if p.ErrorCode != 0 {
				leader = -1
			}
			out = append(out, cluster.PartitionState{Topic: *t.Topic, Partition: p.Partition, Leader: leader, Epoch: p.LeaderEpoch, Replicas: p.Replicas, ISR: p.ISR})
		}
	}
	return out, nil
}

func (e *external) QuorumLeader(ctx context.Context, via int32) (int32, error) {
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = "__cluster_metadata"
	rt.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	req.Topics = []kmsg.DescribeQuorumRequestTopic{rt}
	resp, err := e.pinned(ctx, via, req)
	if err != nil {
		return -1, err
	}
	qr := resp.(*kmsg.DescribeQuorumResponse)
	if err := kerr.ErrorForCode(qr.ErrorCode); err != nil {
		return -1, fmt.Errorf("describe quorum: %w", err)
	}
	if len(qr.Topics) != 1 || len(qr.Topics[0].Partitions) != 1 {
		return -1, errors.New("describe quorum: no partition in the answer")
	}
	return qr.Topics[0].Partitions[0].LeaderID, nil
}

func (e *external) WaitInSync(ctx context.Context, topics []string, want int, timeout time.Duration) (time.Time, error) {
	return cluster.PollUntil(ctx, timeout, 50*time.Millisecond, fmt.Sprintf("%d partitions in sync", want), func(ctx context.Context) (bool, error) {
		via, err := e.LiveNode()
		if err != nil {
			return false, err
		}
		ps, err := e.Metadata(ctx, via, topics)
		if err != nil || len(ps) != want {
			return false, err
		}
		for _, p := range ps {
			if p.Leader < 0 || len(p.ISR) != len(p.Replicas) {
				return false, nil
			}
		}
		return true, nil
	})
}

func (e *external) CreateTopics(ctx context.Context, names []string, partitions int32, rf int16, configs map[string]*string) error {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = int32(e.timeout.Milliseconds())
	for _, name := range names {
		t := kmsg.NewCreateTopicsRequestTopic()
		t.Topic, t.NumPartitions, t.ReplicationFactor = name, partitions, rf
		for k, v := range configs {
			c := kmsg.NewCreateTopicsRequestTopicConfig()
			c.Name, c.Value = k, v
			t.Configs = append(t.Configs, c)
		}
		req.Topics = append(req.Topics, t)
	}
	rctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	resp, err := req.RequestWith(rctx, e.admin)
	if err != nil {
		return fmt.Errorf("create topics: %w", err)
	}
	for _, t := range resp.Topics {
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return fmt.Errorf("create topic %s: %w", t.Topic, err)
		}
	}
	_, err = e.WaitInSync(ctx, names, len(names)*int(partitions), e.timeout)
	return err
}

func (e *external) Close() {
	for _, cl := range e.pin {
		cl.Close()
	}
	e.admin.Close()
}
