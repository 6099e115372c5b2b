package failover

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/weirmq/weir/bench/cluster"
)

// Progress is where a run is, for a progress bar.
type Progress struct {
	Fault         Fault
	Scenario      int // 1-based, of Scenarios
	Scenarios     int
	Round, Rounds int // 1-based round of the scenario
	Sent, Records int // this round's
	Acked         int
	Consumed      int
	Phase         string
}

// Result holds every figure of a run.
type Result struct {
	Config   Config
	Started  time.Time
	Elapsed  time.Duration
	Settings Settings
	// Scenarios holds one entry per fault, in run order.
	Scenarios []*Scenario
	// NATS is the NATS JetStream reference (Config.NATSExec), nil when
	// it did not run.
	NATS *NATSResult
}

// Settings states every client and broker setting used.
type Settings struct {
	Producer []string `json:"producer"`
	Consumer []string `json:"consumer"`
	Broker   []string `json:"broker"`
}

// Scenario is the rounds of one fault.
type Scenario struct {
	Fault  Fault   `json:"fault"`
	Rounds []Round `json:"rounds"`
	// Start is when its first round began.
	Start time.Time `json:"start"`
	// system names the cluster for the picture's title: "" for weir.
	system string
	// acks, arrivals and counts are the series of the picture.
	acks     []Ack
	arrivals []int64
	counts   []int32
}

// Round is one round's figures; durations are milliseconds, -1 where
// not measured.
type Round struct {
	Round       int       `json:"round"`
	Victims     []int32   `json:"victims"`
	FaultAt     time.Time `json:"fault_at"`
	RecoveredAt time.Time `json:"recovered_at"`
	Sent        int       `json:"sent"`
	Acked       int       `json:"acked"`
	Failed      int       `json:"failed"`
	Pending     int       `json:"pending"`
	Consumed    int       `json:"consumed"`
	Lost        int       `json:"lost"`
	Duplicated  int       `json:"duplicated"`
	Reordered   int       `json:"reordered"`
	Moved       int       `json:"moved"`
	Unacked     int       `json:"unacked"`
	// AckedByIsolated counts, for the partition fault, the records the
	// cut-off node acknowledged to the producer after the cut (see
	// isolatedAcks); -1 for other faults and where it is not counted
	// (the librdkafka producer, acks=0).
	AckedByIsolated int `json:"acked_by_isolated"`
	// ConsumerMissed counts acknowledged records the group member had not
	// read when the round ended but a read of the log itself found.
	ConsumerMissed int `json:"consumer_missed"`
	// AckedByPaused counts, in a pause round, the Produce answers without
	// error the paused node gave after SIGCONT for partitions it no longer
	// led (see fencing.go); -1 in other rounds and with librdkafka.
	AckedByPaused int `json:"acked_by_paused"`
	// AckedLeaderAlone counts, in an unclean round, the records
	// acknowledged while the ISR was the leader alone, before its kill:
	// what the unclean election loses (see unclean.go); -1 in other rounds.
	AckedLeaderAlone   int              `json:"acked_leader_alone"`
	LostSeqs           []uint32         `json:"lost_examples,omitempty"`
	MaxProduceStallMs  float64          `json:"max_produce_stall_ms"`
	MaxConsumerStallMs float64          `json:"max_consumer_stall_ms"`
	LeaderElectedMs    float64          `json:"leader_elected_ms"`
	RecoveredMs        float64          `json:"recovered_ms"`
	RebalanceMs        float64          `json:"rebalance_ms"`
	P50SendMs          float64          `json:"p50_send_ms"`
	P99SendMs          float64          `json:"p99_send_ms"`
	MaxSendMs          float64          `json:"max_send_ms"`
	ClientErrors       map[string]int64 `json:"client_errors"`
	CommitFailures     int64            `json:"commit_failures"`
	Problems           []string         `json:"problems,omitempty"`
}

// setCheck copies the checker's counts and produce figures into rd.
func (rd *Round) setCheck(c Check) {
	rd.Sent, rd.Acked, rd.Failed, rd.Pending, rd.Consumed = c.Sent, c.Acked, c.Failed, c.Pending, c.Consumed
	rd.Lost, rd.Duplicated, rd.Reordered, rd.Moved, rd.Unacked, rd.LostSeqs = c.Lost, c.Duplicated, c.Reordered, c.Moved, c.Unacked, c.LostSeqs
	rd.MaxProduceStallMs = millis(c.MaxProduceStall)
	rd.P50SendMs, rd.P99SendMs, rd.MaxSendMs = millis(c.P50), millis(c.P99), millis(c.MaxLatency)
}

// millis is d in milliseconds to 0.1 ms, -1 for a negative d.
func millis(d time.Duration) float64 {
	if d < 0 {
		return -1
	}
	return float64(d.Round(100*time.Microsecond)) / 1e6
}

// runner is one Run.
type runner struct {
	cfg   Config
	log   *slog.Logger
	nodes target
	fl    *faulter
	prod  sender
	cons  *members
	res   *Result
	px    *proxy // between the clients and the brokers; nil when not needed

	mu   sync.Mutex
	prog Progress
	rs   *roundSends
	rnd  uint32
	// partitions is set when the run has a partition fault.
	partitions *partitioner
	// configFile is the server.properties of Config.BrokerConfigs.
	configFile string
}

// Run starts the cluster, creates the topics, and runs Config.Rounds
// rounds of each fault in Config.Faults. A round whose fault left the
// cluster broken (a node that would not start) ends the run with the
// rounds measured so far.
//
// With Config.NATSExec set, it then runs the NATS JetStream reference
// (Result.NATS, see runNATS) after the weir cluster was closed: the same
// producer pattern, faults and checks against a 3-server JetStream
// cluster with an R3 stream per topic.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	res, err := runWeir(ctx, cfg)
	if len(cfg.NATSExec) == 0 || ctx.Err() != nil || (err != nil && (res == nil || len(res.Scenarios) == 0)) {
		return res, err // no reference for a run that measured nothing
	}
	if res == nil {
		res = &Result{Config: cfg, Started: time.Now()}
	}
	if cfg.Progress != nil {
		cfg.Progress(Progress{Phase: "starting NATS", Rounds: cfg.Rounds})
	}
	nats, nerr := runNATS(ctx, cfg)
	if nerr != nil {
		nats.Error = nerr.Error()
	}
	res.NATS = nats
	res.Elapsed = time.Since(res.Started)
	return res, err
}

// runWeir is Run's weir part.
func runWeir(ctx context.Context, cfg Config) (*Result, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &runner{cfg: cfg, log: log, res: &Result{Config: cfg, Started: time.Now()}}
	defer func() { r.res.Elapsed = time.Since(r.res.Started) }()
	defer r.removeConfigFile()
	nodes, err := r.target(ctx)
	if err != nil {
		return nil, err
	}
	defer nodes.Close()
	cfg = r.cfg // with the external run's topic prefix
	cfg.Nodes = len(nodes.IDs())
	r.cfg, r.res.Config = cfg, cfg
	r.nodes = nodes
	if err := r.startProxy(); err != nil {
		return r.res, err
	}
	defer r.closeProxy()
	if slices.Contains(cfg.Faults, FaultUnclean) {
		// The leader alone must acknowledge, and the followers it drops
		// from the ISR must not become eligible leaders (KIP-966's ELR,
		// elected cleanly): see unclean.go.
		cfg.MinInsync = 1
		r.cfg.MinInsync, r.res.Config.MinInsync = 1, 1
	}
	topicCfg := map[string]*string{"min.insync.replicas": new(strconv.Itoa(cfg.MinInsync))}
	if cfg.Unclean {
		topicCfg["unclean.leader.election.enable"] = new("true")
	}
	if cfg.Fsync {
		topicCfg["flush.messages"] = new("1")
	}
	topics := cfg.topicNames()
	if err := nodes.CreateTopics(ctx, topics, int32(cfg.Partitions), int16(cfg.RF), topicCfg); err != nil {
		return r.res, fmt.Errorf("create topics: %w", err)
	}
	r.fl = &faulter{cfg: cfg, nodes: nodes, topics: topics, parts: cfg.Topics * cfg.Partitions, net: r.clientNet(), partitions: r.partitions}
	r.res.Settings = r.settings()
	r.res.Settings.Broker = append(r.res.Settings.Broker, proxySettings(cfg)...)
	group := fmt.Sprintf("weir-bench-failover-%d", time.Now().UnixNano())
	if r.cons, err = newMembers(r.clientSeeds(), topics, group, cfg.ClientTuned, cfg.Consumers, r.fl.parts); err != nil {
		return r.res, err
	}
	defer r.cons.close()
	r.res.Settings.Consumer = membersSettings(group, cfg.ClientTuned, cfg.Consumers)
	if _, err := cluster.PollUntil(ctx, cfg.StartTimeout, 10*time.Millisecond, "consumer assigned", func(context.Context) (bool, error) {
		return r.cons.ready(), nil
	}); err != nil {
		return r.res, err
	}
	if cfg.Client == ClientLibrdkafka {
		rp, err := newRdkafkaProducer(cfg, r.clientSeeds())
		if err != nil {
			return r.res, err
		}
		r.prod = rp
		r.res.Settings.Producer = rdkafkaSettings(cfg, rp.version)
	} else if r.prod, err = newProducer(cfg, r.clientSeeds()); err != nil {
		return r.res, err
	}
	defer r.prod.close(cfg.RoundTimeout)
	if p, ok := r.prod.(*producer); ok && r.partitions != nil && cfg.Acks != AcksNone {
		r.partitions.iso = &isolatedAcks{}
		p.tally.iso.Store(r.partitions.iso)
	}
	stop := r.startProgress()
	defer stop()
	for i, f := range cfg.Faults {
		sc := &Scenario{Fault: f, Start: time.Now()}
		r.res.Scenarios = append(r.res.Scenarios, sc)
		for k := range cfg.Rounds {
			r.setProgress(func(p *Progress) {
				*p = Progress{Fault: f, Scenario: i + 1, Scenarios: len(cfg.Faults), Round: k + 1, Rounds: cfg.Rounds, Records: cfg.Records, Phase: "sending"}
			})
			var rd Round
			var err error
			if f == FaultUnclean {
				rd, err = r.uncleanRound(ctx, sc)
			} else {
				rd, err = r.round(ctx, sc, f)
			}
			rd.Round = k + 1
			sc.Rounds = append(sc.Rounds, rd)
			log.Info("round", "fault", f, "round", k+1, "victims", rd.Victims, "sent", rd.Sent, "acked", rd.Acked,
				"lost", rd.Lost, "duplicated", rd.Duplicated, "leader_elected_ms", rd.LeaderElectedMs,
				"max_produce_stall_ms", rd.MaxProduceStallMs, "problems", len(rd.Problems))
			if err != nil {
				return r.res, fmt.Errorf("%s round %d: %w", f, k+1, err)
			}
		}
		sc.arrivals, sc.counts = r.cons.arrivalsSince(sc.Start.UnixNano())
	}
	return r.res, nil
}

// target starts the weir nodes, or connects to the external cluster.
func (r *runner) target(ctx context.Context) (target, error) {
	cfg := r.cfg
	if cfg.External != nil {
		if cfg.TopicPrefix == DefaultConfig().TopicPrefix {
			r.cfg.TopicPrefix = fmt.Sprintf("weir-bench-failover-%d", time.Now().Unix())
		}
		return newExternal(ctx, *cfg.External, cfg.RoundTimeout)
	}
	args, err := r.brokerConfigArgs()
	if err != nil {
		return nil, err
	}
	nc := cluster.NodesConfig{WeirPath: cfg.WeirPath, WeirArgs: args, WeirEnv: cfg.WeirEnv,
		TempDir: cfg.TempDir, Keep: cfg.Keep, Nodes: cfg.Nodes, GossipProfile: cfg.GossipProfile, StartTimeout: cfg.StartTimeout,
		Name: "failover", Logger: r.log}
	if slices.Contains(cfg.Faults, FaultPartition) {
		nodes, err := startNetnsNodes(ctx, nc)
		if err != nil {
			return nil, err
		}
		r.partitions = &partitioner{net: nodes.net}
		return nodes, nil
	}
	return cluster.StartNodes(ctx, nc)
}

// settings lists the broker settings of the run.
func (r *runner) settings() Settings {
	c := r.cfg
	where := []string{fmt.Sprintf("%d weir serve nodes on loopback, every one a voter", c.Nodes), "gossip profile " + c.GossipProfile}
	if r.partitions != nil {
		where[0] = fmt.Sprintf("%d weir serve nodes, each in a network namespace of its own on a bridge (the clients on the bridge), every one a voter; partition cut %v", c.Nodes, c.PartitionTime)
	}
	if c.External != nil {
		where = []string{fmt.Sprintf("an external cluster of %d brokers at %s", c.Nodes, strings.Join(c.External.Brokers, ",")),
			fmt.Sprintf("stop %q, start %q, pause %q, resume %q", c.External.StopCmd, c.External.StartCmd, c.External.PauseCmd, c.External.ResumeCmd)}
	}
	return Settings{
		Producer: producerSettings(c),
		Broker: append(append(where,
			fmt.Sprintf("%d topic(s) x %d partitions, replication factor %d, min.insync.replicas=%d, unclean.leader.election.enable=%v, flush.messages=%s",
				c.Topics, c.Partitions, c.RF, c.MinInsync, c.Unclean, map[bool]string{true: "1 (fsync policy)", false: "default (no fsync)"}[c.Fsync])),
			append(brokerConfigSettings(c), "every other setting the brokers' defaults")...),
	}
}

// round runs one round of fault f.
func (r *runner) round(ctx context.Context, sc *Scenario, f Fault) (Round, error) {
	cfg := r.cfg
	r.mu.Lock()
	r.rnd++
	round := r.rnd
	rs := &roundSends{}
	r.rs = rs
	r.mu.Unlock()
	pBefore, cBefore := r.prod.errorCounts(), r.cons.errorCounts()
	commitsBefore := r.cons.commitFailures()
	start := time.Now()
	sendTime := time.Duration(float64(cfg.Records) / float64(cfg.Rate) * float64(time.Second))
	faultAt := start.Add(time.Duration(cfg.FaultAfter * float64(sendTime)))

	r.startFencing(f)
	sendErr := make(chan error, 1)
	go func() {
		sendErr <- r.prod.send(ctx, round, cfg.Records, cfg.Rate, rs)
	}()
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
		LeaderElectedMs: millis(out.elected), RecoveredMs: -1, AckedByPaused: -1, AckedLeaderAlone: -1}
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
	rd.AckedByIsolated = -1
	if f == FaultPartition && r.partitions != nil && r.partitions.iso != nil {
		rd.AckedByIsolated = r.partitions.iso.acked()
	}
	r.setProgress(func(p *Progress) { p.Phase = "draining" })
	r.drain(ctx, round, rs)
	end := time.Now()

	sent, acks := rs.snapshot()
	reads := r.cons.reads(round)
	group := CheckRound(sent, acks, slices.Clone(reads))
	if group.Lost > 0 {
		r.setProgress(func(p *Progress) { p.Phase = "reading back" })
		missing := r.cons.missingAcks(round, acks)
		rd.Problems = append(rd.Problems, missedPartitions(r.fl.topics, missing))
		back, err := readBack(ctx, r.nodes.Seeds(), r.fl.topics, round, missing, cfg.RoundTimeout)
		if err != nil {
			rd.Problems = append(rd.Problems, err.Error())
		}
		reads = append(reads, back...)
	}
	c := CheckRound(sent, acks, reads)
	rd.ConsumerMissed = group.Lost - c.Lost
	var fenceProblem string
	if rd.AckedByPaused, fenceProblem = r.fencing(ctx, f, out, acks, reads); fenceProblem != "" {
		rd.Problems = append(rd.Problems, fenceProblem)
	}
	rd.setCheck(c)
	if rs.lastAck.Load() == 0 {
		rd.MaxConsumerStallMs = -1
	} else {
		rd.MaxConsumerStallMs = millis(maxConsumerStall(sent, acks, reads, end.UnixNano()))
	}
	rd.RebalanceMs = -1
	if d, ok := r.cons.rebalanceIn(start.UnixNano(), end.UnixNano()); ok {
		rd.RebalanceMs = millis(d)
	}
	rd.ClientErrors = diffCounts(r.prod.errorCounts(), pBefore)
	for k, v := range diffCounts(r.cons.errorCounts(), cBefore) {
		rd.ClientErrors[k] += v
	}
	rd.CommitFailures = r.cons.commitFailures() - commitsBefore
	sc.acks = append(sc.acks, acks...)
	return rd, faultErr
}

// drain waits until the consumer read every record of round acknowledged,
// or read nothing new for Config.DrainQuiet, or Config.RoundTimeout passed.
func (r *runner) drain(ctx context.Context, round uint32, rs *roundSends) {
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

// diffCounts is now - before, without zeros.
func diffCounts(now, before map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range now {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

func (r *runner) setProgress(f func(*Progress)) {
	r.mu.Lock()
	f(&r.prog)
	r.mu.Unlock()
}

// startProgress calls Config.Progress every Config.ProgressEvery until the
// returned stop.
func (r *runner) startProgress() (stop func()) {
	return progressLoop(r.cfg, func() Progress {
		r.mu.Lock()
		p, rs, round := r.prog, r.rs, r.rnd
		r.mu.Unlock()
		return withCounts(p, rs, round, r.cons.readCount)
	})
}

// progressLoop calls cfg.Progress with snapshot's Progress every
// cfg.ProgressEvery until stop.
func progressLoop(cfg Config, snapshot func() Progress) (stop func()) {
	if cfg.Progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(cfg.ProgressEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			cfg.Progress(snapshot())
		}
	})
	return func() { close(done); wg.Wait() }
}

// withCounts fills p's sent, acknowledged and consumed counts from the
// round's sends and reads (none without a round under way).
func withCounts(p Progress, rs *roundSends, round uint32, readCount func(uint32) int) Progress {
	if rs != nil {
		rs.mu.Lock()
		p.Sent, p.Acked = rs.sent, len(rs.acks)
		rs.mu.Unlock()
		p.Consumed = readCount(round)
	}
	return p
}
