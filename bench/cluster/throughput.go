package cluster

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/weirmq/weir/bench/brokerbench"
	"github.com/weirmq/weir/bench/perf"
)

// The throughput topics and NATS stream.
const (
	topicRF3        = "throughput-rf3"
	topicRF1        = "throughput-rf1"
	natsTputStream  = "TPUT"
	natsTputSubject = "tput"
	mebibyte        = 1 << 20
)

// Throughput target names, as the report prints them.
const (
	TargetAllRF3 = "weir acks=all RF=3"
	TargetOneRF1 = "weir acks=1 RF=1"
	TargetNATS   = "NATS JetStream R3 async publish"
)

// ThroughputRun is one measured run of one target.
type ThroughputRun struct {
	Target string
	// MiBps counts record values (2^20 bytes) per second.
	MiBps float64
	// ClusterCPU is the CPU time the servers (the weir nodes, or the
	// NATS servers) spent per MiB; SelfCPU this process's (the client).
	ClusterCPU, SelfCPU time.Duration
}

// ThroughputResult is the throughput scenario's outcome: Config.ThroughputReps
// runs of each target, interleaved.
type ThroughputResult struct {
	Records, NATSRecords int64
	RecordSize           int
	Partitions           int
	NATSVersion          string
	Runs                 []ThroughputRun
}

// runThroughput measures the three targets Config.ThroughputReps times,
// in rotating order. nc may be nil (then NATS is skipped).
func (r *runner) runThroughput(ctx context.Context, c *weirCluster, nc *natsCluster) (*ThroughputResult, error) {
	cfg := r.cfg
	res := &ThroughputResult{Records: cfg.ThroughputRecords, NATSRecords: cfg.NATSRecords, RecordSize: cfg.RecordSize,
		Partitions: cfg.ThroughputPartitions}
	mir := "2"
	if err := c.createTopics(ctx, []string{topicRF3}, int32(cfg.ThroughputPartitions), 3, map[string]*string{"min.insync.replicas": &mir}); err != nil {
		return res, err
	}
	if err := c.createTopics(ctx, []string{topicRF1}, int32(cfg.ThroughputPartitions), 1, nil); err != nil {
		return res, err
	}
	if _, err := c.waitInSync(ctx, c.nodes[0], []string{topicRF3, topicRF1}, 2*cfg.ThroughputPartitions, cfg.StartTimeout, 100*time.Millisecond); err != nil {
		return res, err
	}
	targets := []string{TargetAllRF3, TargetOneRF1}
	if nc != nil {
		res.NATSVersion = "nats-server " + moduleVersion("github.com/nats-io/nats-server/v2")
		if err := nc.createStream(ctx, natsTputStream, natsTputSubject, cfg.StartTimeout); err != nil {
			return res, err
		}
		targets = append(targets, TargetNATS)
	}
	for rep := range cfg.ThroughputReps {
		for i := range targets {
			t := targets[(i+rep)%len(targets)]
			run, err := r.throughputRun(ctx, c, nc, t)
			if err != nil {
				return res, fmt.Errorf("repetition %d, %s: %w", rep+1, t, err)
			}
			r.log.Info("throughput run", "rep", rep+1, "target", t, "MiB/s", fmt.Sprintf("%.1f", run.MiBps))
			res.Runs = append(res.Runs, run)
		}
	}
	return res, nil
}

// throughputRun runs one target once.
func (r *runner) throughputRun(ctx context.Context, c *weirCluster, nc *natsCluster, target string) (ThroughputRun, error) {
	cfg := r.cfg
	run := ThroughputRun{Target: target}
	pids := c.pids()
	if target == TargetNATS {
		pids = nc.pids()
	}
	before, err := readCPUs(pids)
	if err != nil {
		return run, err
	}
	var bytes int64
	var elapsed time.Duration
	switch target {
	case TargetNATS:
		if err := nc.purge(ctx, natsTputStream); err != nil {
			return run, fmt.Errorf("purge: %w", err)
		}
		before, err = readCPUs(pids)
		if err != nil {
			return run, err
		}
		elapsed, err = nc.publishAsync(ctx, natsTputSubject, cfg.NATSRecords, cfg.RecordSize)
		if err != nil {
			return run, err
		}
		bytes = cfg.NATSRecords * int64(cfg.RecordSize)
	default:
		pc := perf.DefaultProducerConfig()
		pc.Brokers = c.seeds()
		pc.Records = cfg.ThroughputRecords
		pc.RecordSize = cfg.RecordSize
		pc.ReportInterval = 0
		if target == TargetAllRF3 {
			pc.Topic, pc.Acks, pc.Idempotent = topicRF3, perf.AcksAll, true
		} else {
			pc.Topic, pc.Acks, pc.Idempotent = topicRF1, perf.AcksLeader, false
		}
		res, err := perf.RunProducer(ctx, pc, nil)
		if err != nil {
			return run, err
		}
		bytes, elapsed = res.Bytes, res.Elapsed
	}
	after, err := readCPUs(pids)
	if err != nil {
		return run, err
	}
	mib := float64(bytes) / mebibyte
	if elapsed > 0 {
		run.MiBps = mib / elapsed.Seconds()
	}
	if mib > 0 {
		run.ClusterCPU = time.Duration(float64(after.cluster-before.cluster) / mib)
		run.SelfCPU = time.Duration(float64(after.self-before.self) / mib)
	}
	return run, nil
}

// cpus is the CPU time spent so far by a cluster's server processes
// together and by this process.
type cpus struct{ cluster, self time.Duration }

func readCPUs(pids []int) (cpus, error) {
	var u cpus
	for _, pid := range pids {
		d, err := brokerbench.ReadProcessCPU(pid)
		if err != nil {
			return u, err
		}
		u.cluster += d
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return u, fmt.Errorf("getrusage: %w", err)
	}
	u.self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return u, nil
}
