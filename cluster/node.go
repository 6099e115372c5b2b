package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirmq/weir/actors/fetchsession"
	"github.com/weirmq/weir/actors/group"
	"github.com/weirmq/weir/actors/partition"
	"github.com/weirmq/weir/cluster/config"
	"github.com/weirmq/weir/cluster/membership"
	"github.com/weirmq/weir/cluster/metadata"
	"github.com/weirmq/weir/cluster/quorum"
	"github.com/weirmq/weir/cluster/transport"
	"github.com/weirmq/weir/log"
	"github.com/weirmq/weir/wire"
)

// ErrStopped is returned by a Node's methods after Stop.
var ErrStopped = errors.New("cluster: node stopped")

// Node is one running weir node (see the package doc).
type Node struct {
	cfg    Config
	system *actor.ActorSystem
	log    *slog.Logger
	id     int32
	rack   string

	logs     *log.Manager
	replicas *replicaSet
	groups   *coordinators // group coordinators (coordinators.go)
	meta     *actor.PID

	advertisedHost string
	advertisedPort int32

	image       atomic.Pointer[metadata.Image]
	brokerEpoch atomic.Int64
	// previousEpoch is the broker epoch of this node's previous process if
	// it shut down cleanly, else -1 (RegisterBrokerRequest's
	// PreviousBrokerEpoch; clean_shutdown.go).
	previousEpoch int64
	health        atomic.Pointer[MetadataHealth]

	readyOnce sync.Once
	ready     chan error

	server  *wire.Server
	handler *wire.BrokerHandler
	ln      net.Listener
	// files divides the open-file limit (files.go).
	files filePlan

	// producerIDs is the block of producer ids this node hands out
	// (producer_ids.go).
	producerIDs producerIDs

	// The replicated cluster (cluster_start.go): clustered is set when
	// gossip.listener is; voters are controller.quorum.voters.
	clustered   bool
	voters      []int32
	incarnation metadata.UUID
	remote      *transport.Transport
	members     *membership.Members
	born        time.Time
	// leaseFrom is when the last heartbeat the controller answered was
	// sent, as time since born (monotonic); see LeaseValid.
	leaseFrom atomic.Int64
	// watches are the metadata actor's peer watches (peer_watch.go), nil
	// until it started or for a single node.
	watches atomic.Pointer[peerWatches]
	// quorumLeader is the metadata quorum's leader as the metadata actor
	// last saw it (-1: none known).
	quorumLeader atomic.Int32
	// halting makes Stop skip the controlled shutdown and the gossip
	// leave (Halt).
	halting atomic.Bool
	// duplicate is the controller's message when it refused this
	// process's registration as a duplicate of a live one.
	duplicate atomic.Pointer[string]

	tickerStop chan struct{}
	tickerDone chan struct{}
	// balanceStop and balanceDone stop and await the preferred-leader
	// balancer (leader_balance.go); nil when it does not run.
	balanceStop chan struct{}
	balanceDone chan struct{}
	stopOnce    sync.Once
	stopErr     error
	stopped     atomic.Bool
}

// StartNode starts a node in system, which the caller owns and shuts down
// after Node.Stop. It returns once the node is registered, unfenced and
// leads its partitions, with its Kafka listener accepting connections;
// on error everything it started is stopped again.
func StartNode(system *actor.ActorSystem, cfg Config) (_ *Node, err error) {
	cfg.setDefaults()
	if system == nil {
		return nil, fmt.Errorf("%w: no actor system", ErrInvalidConfig)
	}
	dir, err := cfg.dataDir()
	if err != nil {
		return nil, err
	}
	n := &Node{
		cfg: cfg, system: system, id: cfg.Broker.NodeID(), born: time.Now(),
		ready: make(chan error, 1), tickerStop: make(chan struct{}), tickerDone: make(chan struct{}),
	}
	n.log = cfg.Logger.With("node", n.id)
	n.producerIDs.ask = n.allocateProducerIDs
	if v, ok := cfg.Broker.Value("broker.rack"); ok {
		n.rack = v
	}
	var undo []func()
	defer func() {
		if err != nil {
			for i := len(undo) - 1; i >= 0; i-- {
				undo[i]()
			}
		}
	}()

	n.ln = cfg.Listener
	if n.ln == nil {
		addr, err := cfg.listenAddr()
		if err != nil {
			return nil, err
		}
		if n.ln, err = net.Listen("tcp", addr); err != nil {
			return nil, fmt.Errorf("cluster: listen: %w", err)
		}
	}
	undo = append(undo, func() { _ = n.ln.Close() })
	if n.advertisedHost, n.advertisedPort, err = cfg.advertisedAddr(n.ln.Addr()); err != nil {
		return nil, err
	}

	if err := n.planFiles(); err != nil {
		return nil, err
	}
	wcfg, err := n.wireConfig()
	if err == nil {
		err = wcfg.Validate()
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	n.logs, err = log.OpenManager(log.ManagerConfig{Dir: dir, FS: cfg.FS, Now: cfg.Now, Logger: n.log,
		MaxOpenFiles: n.files.SegmentFiles})
	if err != nil {
		return nil, fmt.Errorf("cluster: open data directory: %w", err)
	}
	undo = append(undo, func() { _ = n.logs.Close() })
	if n.previousEpoch, err = takePreviousEpoch(cfg.FS, dir, n.logs.CleanShutdown()); err != nil {
		return nil, err
	}
	if err := n.planCluster(); err != nil {
		return nil, err
	}
	if n.clustered {
		if err := n.startTransport(); err != nil {
			return nil, err
		}
		undo = append(undo, n.remote.Stop)
	}
	st, err := quorum.OpenStorage(n.logs, cfg.FS, n.voters)
	if err != nil {
		return nil, err
	}
	q, err := quorum.NewNode(n.quorumConfig(), st)
	if err != nil {
		return nil, err
	}
	n.image.Store(q.Image())
	n.replicas = newReplicaSet(system, n.logs, cfg.Broker, n.id, cfg.Now, n.log)
	n.replicas.isr = newISRChanges()
	n.replicas.leaseValid = n.LeaseValid
	n.replicas.fetchers = newFetcherSet(system, n.id, cfg.Broker, n.Image, n.log)
	undo = append(undo, n.replicas.stopAll, n.replicas.fetchers.stop)
	if n.groups, err = n.startCoordinators(); err != nil {
		return nil, err
	}
	n.replicas.coords = n.groups
	undo = append(undo, func() { _ = n.groups.stop() })

	ma := newMetadataActor(n, q, n.remote)
	if n.meta, err = n.spawnMetadata(ma); err != nil {
		return nil, err
	}
	undo = append(undo, func() { _ = system.Root.StopFuture(n.meta).Wait() })
	system.Root.Send(n.meta, &startMetadata{})
	if n.clustered {
		if err := n.startMembership(); err != nil {
			return nil, err
		}
		undo = append(undo, func() { _ = n.members.Stop() })
	}
	go n.tick()
	undo = append(undo, n.stopTicker)

	select {
	case err := <-n.ready:
		if err != nil {
			return nil, err
		}
	case <-time.After(cfg.StartTimeout):
		if msg := n.duplicate.Load(); msg != nil {
			return nil, fmt.Errorf("cluster: node %d not started: another live process is registered as node %d (%s); stop it, or give this process another node.id", n.id, n.id, *msg)
		}
		return nil, fmt.Errorf("cluster: node %d not ready after %v", n.id, cfg.StartTimeout)
	}

	n.handler, err = wire.NewBrokerHandler(wire.BrokerHandlerConfig{Broker: (*nodeBroker)(n), System: system, Logger: n.log,
		FetchSessions: n.fetchSessionConfig()})
	if err != nil {
		return nil, err
	}
	undo = append(undo, func() { _ = n.handler.Close() })
	n.server, err = wire.NewServer(wcfg, n.handler)
	if err != nil {
		return nil, err
	}
	go func() { _ = n.server.Serve(n.ln) }()
	if n.clustered && n.cfg.Broker.Bool("auto.leader.rebalance.enable") {
		n.balanceStop, n.balanceDone = make(chan struct{}), make(chan struct{})
		go n.balanceLeaders(n.balanceStop, n.balanceDone)
	}
	n.log.Info("weir node started", "addr", n.ln.Addr().String(),
		"advertised", fmt.Sprintf("%s:%d", n.advertisedHost, n.advertisedPort),
		"data", dir, "cluster_id", n.Image().ClusterID(), "broker_epoch", n.brokerEpoch.Load())
	return n, nil
}

// planFiles divides the open-file limit between connections and segment
// files (files.go) and logs the division.
func (n *Node) planFiles() error {
	limit := n.cfg.OpenFileLimit
	if limit == 0 {
		var err error
		if limit, err = openFileLimit(); err != nil {
			return err
		}
	}
	configured := int64(-1)
	if _, set := n.cfg.Broker.Value("max.connections"); set {
		configured = n.cfg.Broker.Int("max.connections")
	}
	n.files = planFiles(limit, configured)
	if n.files.Warning != "" {
		n.log.Warn("cluster: "+n.files.Warning, "open_file_limit", limit)
	}
	n.log.Info("open-file limit divided", "open_file_limit", limit, "max.connections", n.files.Connections,
		"segment_files", n.files.SegmentFiles, "reserved", n.files.Reserve)
	return nil
}

// wireConfig maps the broker configs the socket server reads.
func (n *Node) wireConfig() (wire.Config, error) {
	c := wire.DefaultConfig()
	c.ListenAddr = n.ln.Addr().String()
	c.Logger = n.log
	b := n.cfg.Broker
	c.SocketRequestMaxBytes = int32(b.Int("socket.request.max.bytes"))
	c.ConnectionsMaxIdleMs = b.Int("connections.max.idle.ms")
	c.MaxConnections = n.files.Connections
	c.MaxConnectionsPerIP = int(b.Int("max.connections.per.ip"))
	c.QueuedMaxRequestBytes = n.cfg.queuedMaxRequestBytes()
	var err error
	if c.MaxConnectionsPerIPOverrides, err = n.cfg.perIPOverrides(); err != nil {
		return c, err
	}
	return c, nil
}

// fetchSessionConfig maps the fetch session cache's broker configs.
func (n *Node) fetchSessionConfig() *fetchsession.Config {
	b := n.cfg.Broker
	return &fetchsession.Config{
		MaxSlots:      int(b.Int("max.incremental.fetch.session.cache.slots")),
		MinEvictionMs: b.Int("min.incremental.fetch.session.eviction.ms"),
	}
}

// signalReady reports the start-up outcome once.
func (n *Node) signalReady(err error) {
	n.readyOnce.Do(func() { n.ready <- err })
}

// tick is the node's ticker: raft ticks and partition ticks.
func (n *Node) tick() {
	defer close(n.tickerDone)
	t := time.NewTicker(n.cfg.TickInterval)
	defer t.Stop()
	// Partitions holding waiters (acks=all, parked reads and watches) get
	// every tick; the others only once their next deadline has come
	// (Replica.NextTickMs: an ISR member's lag limit, the producer expiry
	// check), which for an idle partition is minutes away, so thousands
	// of idle partitions cost a load of an atomic each per tick and no
	// message. Every backstopTicks all of them get one, in case a
	// deadline was published late.
	const backstopTicks = 1200 // one minute at the default 50 ms
	for beat := 1; ; beat++ {
		select {
		case <-n.tickerStop:
			return
		case <-t.C:
			n.system.Root.Send(n.meta, &tickMetadata{})
			all := beat%backstopTicks == 0
			nowMs := n.cfg.Now().UnixMilli()
			for _, c := range n.replicas.all() {
				if all || c.TickDue(nowMs) {
					c.Tick(0)
				}
			}
			n.groups.tick()
		}
	}
}

func (n *Node) stopTicker() {
	select {
	case <-n.tickerStop:
	default:
		close(n.tickerStop)
	}
	<-n.tickerDone
}

// Stop shuts the node down: the listener and every connection first, then
// the ticker, the metadata actor and the partition actors, and last the
// logs (flushed, checkpointed, clean-shutdown marker). It is safe to call
// more than once; later calls return the first outcome.
func (n *Node) Stop() error {
	n.stopOnce.Do(func() {
		n.stopBalancer()
		if n.clustered && n.meta != nil && !n.halting.Load() {
			n.controlledShutdown()
		}
		n.stopped.Store(true)
		var errs []error
		if err := n.server.Close(); err != nil {
			errs = append(errs, err)
		}
		if err := n.handler.Close(); err != nil {
			errs = append(errs, err)
		}
		n.stopTicker()
		if n.members != nil {
			// Announce the departure so the others need not wait for the
			// failure detector.
			if !n.halting.Load() {
				_ = n.members.Leave(time.Second)
			}
			_ = n.members.Stop()
		}
		if err := n.groups.stop(); err != nil {
			errs = append(errs, err)
		}
		if err := n.system.Root.StopFuture(n.meta).Wait(); err != nil {
			errs = append(errs, fmt.Errorf("cluster: stopping metadata actor: %w", err))
		}
		n.replicas.fetchers.stop()
		n.replicas.stopAll()
		if n.remote != nil {
			n.remote.Stop()
		}
		if err := recordEpoch(n.cfg.FS, n.logs.Dir(), n.brokerEpoch.Load()); err != nil {
			errs = append(errs, err)
		}
		if err := n.logs.Close(); err != nil {
			errs = append(errs, err)
		}
		n.stopErr = errors.Join(errs...)
		n.log.Info("weir node stopped", "err", n.stopErr)
	})
	return n.stopErr
}

// Halt stops the node as a crash looks to the other nodes: no controlled
// shutdown, no gossip leave, so they learn of it from the failure detector
// and the controller's session timeout. Its own logs are still closed
// cleanly. For tests and benchmarks that kill nodes in one process.
func (n *Node) Halt() error {
	n.halting.Store(true)
	return n.Stop()
}

// ID returns the node's node.id.
func (n *Node) ID() int32 { return n.id }

// Addr returns the address the Kafka listener is bound to.
func (n *Node) Addr() net.Addr { return n.ln.Addr() }

// AdvertisedAddr returns the host:port clients are told to connect to.
func (n *Node) AdvertisedAddr() string {
	return net.JoinHostPort(n.advertisedHost, fmt.Sprint(n.advertisedPort))
}

// Image returns the latest metadata image whose partitions the node's
// actors serve.
func (n *Node) Image() *metadata.Image { return n.image.Load() }

// MetadataHealth is whether the node's metadata quorum can write its log,
// as the metadata actor last published it.
type MetadataHealth struct {
	// Writable is true while metadata writes succeed.
	Writable bool
	// Stopped is true once the quorum stopped for good (a corrupt log or
	// an apply failure); a restart is needed.
	Stopped bool
	// Since is when writes began to fail (zero while Writable).
	Since time.Time
	// Cause names the failure (an errno's text such as "no space left on
	// device"), without paths.
	Cause string
}

// MetadataHealth returns whether the metadata quorum can write its log.
func (n *Node) MetadataHealth() MetadataHealth {
	if h := n.health.Load(); h != nil {
		return *h
	}
	return MetadataHealth{Writable: true}
}

// BrokerEpoch returns this process's broker epoch.
func (n *Node) BrokerEpoch() int64 { return n.brokerEpoch.Load() }

// Replica returns the partition actor of a partition on this node, or nil.
func (n *Node) Replica(topic metadata.UUID, index int32) *partition.Client {
	return n.replicas.get(topic, index)
}

// Metadata sends req to the controller (the metadata actor while this
// node leads the quorum), which decides it against its latest image and,
// unless req only validates, proposes the records as one batch. It returns
// the controller's typed result once the batch is applied and the
// partition actors reconciled: Image then holds the change. The error is
// only the wait's: ctx ended (the change may still apply) or the node
// stopped; every refusal is in the result, as Kafka error codes.
func (n *Node) Metadata(ctx context.Context, req metadata.Request) (metadata.Result, error) {
	if n.stopped.Load() {
		return nil, ErrStopped
	}
	in := partition.NewInbox(n.system)
	defer in.Close()
	in.Watch(n.meta)
	n.system.Root.Send(n.meta, &controllerRequest{ID: 1, ReplyTo: in.PID(), Request: req})
	for {
		m, err := in.Receive(ctx)
		if err != nil {
			return nil, err
		}
		switch m := m.(type) {
		case *controllerReply:
			return m.Result, nil
		case *actor.Terminated:
			return nil, ErrStopped
		}
	}
}

// ProducerID returns a producer id that no broker of the cluster has
// handed out, from this node's block; when the block runs out it asks the
// controller for the next one (AllocateProducerIDsRequest).
func (n *Node) ProducerID(ctx context.Context) (int64, error) {
	return n.producerIDs.next(ctx)
}

// Config returns the node's broker configuration.
func (n *Node) Config() *config.Broker { return n.cfg.Broker }

// nodeBroker is the Node as wire's Broker.
type nodeBroker Node

var _ wire.Broker = (*nodeBroker)(nil)

func (b *nodeBroker) NodeID() int32          { return b.id }
func (b *nodeBroker) BrokerEpoch() int64     { return (*Node)(b).BrokerEpoch() }
func (b *nodeBroker) Image() *metadata.Image { return (*Node)(b).Image() }
func (b *nodeBroker) Config() *config.Broker { return b.cfg.Broker }
func (b *nodeBroker) Replica(topic metadata.UUID, index int32) *partition.Client {
	return (*Node)(b).Replica(topic, index)
}
func (b *nodeBroker) Metadata(ctx context.Context, req metadata.Request) (metadata.Result, error) {
	return (*Node)(b).Metadata(ctx, req)
}
func (b *nodeBroker) ProducerID(ctx context.Context) (int64, error) {
	return (*Node)(b).ProducerID(ctx)
}
func (b *nodeBroker) GroupCoordinators() *group.Coordinators { return b.groups.groups }
func (b *nodeBroker) LeaseValid() bool                       { return (*Node)(b).LeaseValid() }

// LeaseUntil is Node.LeaseUntil.
func (b *nodeBroker) LeaseUntil() time.Time    { return (*Node)(b).LeaseUntil() }
func (b *nodeBroker) PeerDown(node int32) bool { return (*Node)(b).PeerDown(node) }

// PeerDown reports whether this node's connection to node's Kafka listener
// ended and none could be made since (peerWatches.Down): a hint that its
// process may be gone, before the quorum says so. Always false for a
// single node.
func (n *Node) PeerDown(node int32) bool {
	w := n.watches.Load()
	return w != nil && w.Down(node)
}
