package failover

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/weirmq/weir/bench/cluster"
)

// natsServers is the NATS reference cluster's size: 3 servers, R3 streams.
const natsServers = 3

// NATSResult is the NATS JetStream reference of a run (--compare nats):
// the same producer pattern and faults against a 3-server JetStream
// cluster, its rounds in the same shape as weir's.
type NATSResult struct {
	// Version names the nats-server and nats.go modules.
	Version  string
	Settings Settings
	// Scenarios holds one entry per fault that applies, in run order.
	Scenarios []*Scenario
	// Skipped lists the faults that do not apply, with the reason.
	Skipped []SkippedFault
	// Error says why the reference ended early, "" when it did not.
	Error string
}

// SkippedFault is a fault the NATS reference did not run.
type SkippedFault struct {
	Fault  Fault  `json:"fault"`
	Reason string `json:"reason"`
}

// natsRunner is the NATS part of a Run.
type natsRunner struct {
	cfg     Config
	log     *slog.Logger
	servers *cluster.NATSServers
	fl      *natsFaulter
	prod    *natsProducer
	cons    *natsConsumer
	topics  []string
	rnd     uint32

	mu   sync.Mutex
	prog Progress
	rs   *roundSends
}

func natsClientVersion() string { return cluster.NATSClientVersion() }

// runNATS runs Config.Rounds rounds of every fault of Config.Faults that
// applies against a NATS JetStream cluster it starts (Config.NATSExec
// runs each server), with the same records, rate, acks mapping and
// checks as the weir rounds.
func runNATS(ctx context.Context, cfg Config) (*NATSResult, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	res := &NATSResult{Version: "nats-server " + cluster.NATSServerVersion() + ", nats.go " + natsClientVersion()}
	servers, err := cluster.StartNATSServers(cluster.NATSServersConfig{Exec: cfg.NATSExec, TempDir: cfg.TempDir, Keep: cfg.Keep,
		Servers: natsServers, SyncAlways: cfg.Fsync, StartTimeout: cfg.StartTimeout})
	if err != nil {
		return res, err
	}
	defer servers.Close()
	r := &natsRunner{cfg: cfg, log: log, servers: servers, topics: cfg.topicNames()}
	res.Settings = r.settings()
	if err := r.createStreams(ctx); err != nil {
		return res, err
	}
	if r.fl, err = newNATSFaulter(cfg, servers, r.topics); err != nil {
		return res, err
	}
	defer r.fl.close()
	if _, err := r.fl.waitWhole(ctx); err != nil {
		return res, err
	}
	durable := fmt.Sprintf("weir-bench-failover-%d", time.Now().UnixNano())
	if r.cons, err = newNATSConsumer(ctx, servers.URLs(), r.topics, durable, cfg.StartTimeout); err != nil {
		return res, err
	}
	defer r.cons.close()
	res.Settings.Consumer = natsConsumerSettings(durable)
	if r.prod, err = newNATSProducer(cfg, servers.URLs()); err != nil {
		return res, err
	}
	defer r.prod.close(cfg.RoundTimeout)
	stop := r.startProgress()
	defer stop()
	for i, f := range cfg.Faults {
		if why := natsFaultSkip(f); why != "" {
			res.Skipped = append(res.Skipped, SkippedFault{Fault: f, Reason: why})
			continue
		}
		sc := &Scenario{Fault: f, Start: time.Now(), system: "NATS JetStream"}
		res.Scenarios = append(res.Scenarios, sc)
		for k := range cfg.Rounds {
			r.setProgress(func(p *Progress) {
				*p = Progress{Fault: "nats:" + f, Scenario: i + 1, Scenarios: len(cfg.Faults), Round: k + 1, Rounds: cfg.Rounds, Records: cfg.Records, Phase: "sending"}
			})
			rd, err := r.round(ctx, sc, f)
			rd.Round = k + 1
			sc.Rounds = append(sc.Rounds, rd)
			log.Info("nats round", "fault", f, "round", k+1, "victims", rd.Victims, "sent", rd.Sent, "acked", rd.Acked,
				"failed", rd.Failed, "lost", rd.Lost, "duplicated", rd.Duplicated, "leader_elected_ms", rd.LeaderElectedMs,
				"max_produce_stall_ms", rd.MaxProduceStallMs, "problems", rd.Problems)
			if err != nil {
				return res, fmt.Errorf("NATS %s round %d: %w", f, k+1, err)
			}
		}
		sc.arrivals, sc.counts = r.cons.arrivalsSince(sc.Start.UnixNano())
	}
	return res, nil
}

// settings states the servers' and the producer's settings.
func (r *natsRunner) settings() Settings {
	c := r.cfg
	sync := "JetStream's default fsync every 2 minutes (acknowledged means stored on a quorum, not on disk)"
	if c.Fsync {
		sync = "sync_interval always (--fsync): every write fsynced before its ack"
	}
	return Settings{
		Producer: natsProducerSettings(c),
		Broker: []string{fmt.Sprintf("%d nats-server %s processes on loopback (this program re-executed, nats-server from its Go module), one JetStream cluster",
			natsServers, cluster.NATSServerVersion()),
			fmt.Sprintf("%d stream(s) (one per topic) of subjects <topic>.0 to <topic>.%d (one per partition), R3, file storage", c.Topics, c.Partitions-1),
			sync, "every other setting nats-server's defaults"},
	}
}

// createStreams creates one R3 file stream per topic, retrying while the
// JetStream cluster elects its meta leader.
func (r *natsRunner) createStreams(ctx context.Context) error {
	conn, err := nats.Connect(r.servers.URLs())
	if err != nil {
		return fmt.Errorf("nats connect: %w", err)
	}
	defer conn.Close()
	js, err := jetstream.New(conn)
	if err != nil {
		return err
	}
	for _, t := range r.topics {
		_, err := cluster.PollUntil(ctx, r.cfg.StartTimeout, 200*time.Millisecond, "NATS stream "+t+" created", func(ctx context.Context) (bool, error) {
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			_, err := js.CreateOrUpdateStream(cctx, jetstream.StreamConfig{Name: natsStreamName(t), Subjects: []string{t + ".*"},
				Replicas: natsServers, Storage: jetstream.FileStorage})
			return err == nil, nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// round runs one round of fault f: runner.round's steps against NATS.
func (r *natsRunner) round(ctx context.Context, sc *Scenario, f Fault) (Round, error) {
	cfg := r.cfg
	rs := &roundSends{}
	r.mu.Lock()
	r.rnd++
	round := r.rnd
	r.rs = rs
	r.mu.Unlock()
	pBefore := r.prod.errorCounts()
	ackFailsBefore := r.cons.commitFailures.Load()
	start := time.Now()
	sendTime := time.Duration(float64(cfg.Records) / float64(cfg.Rate) * float64(time.Second))
	faultAt := start.Add(time.Duration(cfg.FaultAfter * float64(sendTime)))

	sendErr := make(chan error, 1)
	go func() { sendErr <- r.prod.send(ctx, round, cfg.Records, cfg.Rate, rs) }()
	var out faultOutcome
	var faultErr error
	t := time.NewTimer(time.Until(faultAt))
	select {
	case <-t.C:
		r.setProgress(func(p *Progress) { p.Phase = "fault " + string(f) })
		out, faultErr = r.fl.inject(ctx, f)
	case <-ctx.Done():
		faultErr = context.Cause(ctx)
	}
	t.Stop()
	rd := Round{Victims: out.victims, FaultAt: out.at, RecoveredAt: out.recovered, Problems: out.problems,
		LeaderElectedMs: millis(out.elected), RecoveredMs: -1, RebalanceMs: -1}
	if !out.recovered.IsZero() {
		rd.RecoveredMs = millis(out.recovered.Sub(out.at))
	}
	if err := <-sendErr; err != nil {
		return rd, err
	}
	if faultErr != nil {
		rd.Problems = append(rd.Problems, faultErr.Error())
	}
	r.setProgress(func(p *Progress) { p.Phase = "waiting for acks" })
	if err := rs.waitOutcomes(ctx, cfg.RoundTimeout); err != nil {
		rd.Problems = append(rd.Problems, err.Error())
	}
	r.setProgress(func(p *Progress) { p.Phase = "draining" })
	r.drain(ctx, round, rs)
	end := time.Now()

	sent, acks := rs.snapshot()
	reads := r.cons.reads(round)
	group := CheckRound(sent, acks, slices.Clone(reads))
	if group.Lost > 0 {
		r.setProgress(func(p *Progress) { p.Phase = "reading back" })
		back, err := natsReadBack(ctx, r.servers.URLs(), r.topics, round, r.cons.missingAcks(round, acks), cfg.RoundTimeout)
		if err != nil {
			rd.Problems = append(rd.Problems, err.Error())
		}
		reads = append(reads, back...)
	}
	c := CheckRound(sent, acks, reads)
	rd.ConsumerMissed = group.Lost - c.Lost
	rd.setCheck(c)
	if rs.lastAck.Load() == 0 {
		rd.MaxConsumerStallMs = -1
	} else {
		rd.MaxConsumerStallMs = millis(maxConsumerStall(sent, acks, reads, end.UnixNano()))
	}
	rd.ClientErrors = diffCounts(r.prod.errorCounts(), pBefore)
	rd.CommitFailures = r.cons.commitFailures.Load() - ackFailsBefore
	sc.acks = append(sc.acks, acks...)
	return rd, faultErr
}

// drain waits as runner.drain does.
func (r *natsRunner) drain(ctx context.Context, round uint32, rs *roundSends) {
	_, acks := rs.snapshot()
	last, lastAt := -1, time.Now()
	_, _ = cluster.PollUntil(ctx, r.cfg.RoundTimeout, 20*time.Millisecond, "drain", func(context.Context) (bool, error) {
		if r.cons.missing(round, acks) == 0 {
			return true, nil
		}
		if n := r.cons.readCount(round); n != last {
			last, lastAt = n, time.Now()
		}
		return time.Since(lastAt) > r.cfg.DrainQuiet, nil
	})
}

func (r *natsRunner) setProgress(f func(*Progress)) {
	r.mu.Lock()
	f(&r.prog)
	r.mu.Unlock()
}

// startProgress calls Config.Progress every Config.ProgressEvery until
// the returned stop, as runner.startProgress does.
func (r *natsRunner) startProgress() (stop func()) {
	return progressLoop(r.cfg, func() Progress {
		r.mu.Lock()
		p, rs, round := r.prog, r.rs, r.rnd
		r.mu.Unlock()
		return withCounts(p, rs, round, r.cons.readCount)
	})
}
