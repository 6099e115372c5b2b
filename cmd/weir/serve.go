package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirmq/weir/cluster"
	"github.com/weirmq/weir/cluster/config"
	"github.com/weirmq/weir/internal/cli"
)

// serveFlags are weir serve's flags: shortcuts for server.properties
// entries, which they override.
type serveFlags struct {
	configFile string
	data       string
	listen     string
	advertise  string
	nodeID     string
	logLevel   string
	// the replicated cluster
	gossipAddr    string
	join          string
	voters        string
	rack          string
	remoteAddr    string
	gossipProfile string
}

// runServe runs one broker until ctx is cancelled (SIGTERM, SIGINT), then
// shuts it down cleanly: listener closed, partition actors stopped, logs
// flushed and checkpointed, clean-shutdown marker written.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f serveFlags
	fs := cli.NewFlagSet("serve", "[flags]", stderr)
	fs.StringVar(&f.configFile, "config", "", "a Kafka server.properties-style `file`; the flags below override it")
	fs.StringVar(&f.data, "data", "", "data `directory` (log.dirs; default ./weir-data)")
	fs.StringVar(&f.listen, "listen", "", "Kafka listener `host:port` (listeners; default 127.0.0.1:9092)")
	fs.StringVar(&f.advertise, "advertise", "", "`host:port` clients are told to connect to (advertised.listeners; default the listener)")
	fs.StringVar(&f.nodeID, "node-id", "", "this node's `id` (node.id; default 1)")
	fs.StringVar(&f.gossipAddr, "gossip-addr", "", "gossip `host:port` (gossip.listener); set, the node joins a cluster")
	fs.StringVar(&f.join, "join", "", "gossip `addresses` of nodes to join, comma-separated (gossip.join); may list this node and nodes not up yet")
	fs.StringVar(&f.voters, "voters", "", "node `ids` of the metadata quorum's voters, as 1,2,3 (controller.quorum.voters)")
	fs.StringVar(&f.rack, "rack", "", "this broker's `rack` (broker.rack)")
	fs.StringVar(&f.remoteAddr, "remote-addr", "", "actor remote `host:port` for messages between nodes (remote.listener; default the gossip host, a free port)")
	fs.StringVar(&f.gossipProfile, "gossip-profile", "", "failure detection `profile`: fast, relaxed or lan (gossip.profile; default fast)")
	fs.StringVar(&f.logLevel, "log-level", "info", "log `level`: debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return cli.Usagef("--log-level %q: %v", f.logLevel, err)
	}
	broker, err := serveConfig(f)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	// protoactor's own lines (dead letters, supervision) only when debugging.
	actorLogger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: max(level, slog.LevelWarn)}))
	system := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return actorLogger }))
	defer system.Shutdown()

	cfg := cluster.NewConfig(broker)
	cfg.Logger = logger
	if ignored := broker.Ignored(); len(ignored) > 0 {
		logger.Warn("server.properties sets Kafka configs weir does not use; they are ignored", "configs", strings.Join(ignored, ","))
	}
	node, err := cluster.StartNode(system, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "weir serving node %d on %s (advertised %s)\n", node.ID(), node.Addr(), node.AdvertisedAddr())
	<-ctx.Done()
	logger.Info("shutting down", "cause", context.Cause(ctx))
	if err := node.Stop(); err != nil {
		return fmt.Errorf("serve: stopping: %w", err)
	}
	fmt.Fprintln(stdout, "weir stopped")
	return nil
}

// serveConfig reads the config file and applies the flags over it.
func serveConfig(f serveFlags) (*config.Broker, error) {
	broker := config.NewBroker()
	if f.configFile != "" {
		var err error
		if broker, err = config.ParseFile(f.configFile); err != nil {
			return nil, err
		}
	}
	overrides := []struct{ name, value string }{
		{"log.dirs", f.data},
		{"listeners", listener(f.listen)},
		{"advertised.listeners", listener(f.advertise)},
		{"node.id", f.nodeID},
		{"gossip.listener", f.gossipAddr},
		{"gossip.join", f.join},
		{"controller.quorum.voters", f.voters},
		{"broker.rack", f.rack},
		{"remote.listener", f.remoteAddr},
		{"gossip.profile", f.gossipProfile},
	}
	for _, o := range overrides {
		if o.value == "" {
			continue
		}
		if err := broker.Override(o.name, o.value); err != nil {
			return nil, cli.Usagef("%s: %v", o.name, err)
		}
	}
	return broker, nil
}

// listener turns a flag's host:port into a listeners entry.
func listener(addr string) string {
	if addr == "" || strings.Contains(addr, "://") {
		return addr
	}
	return "PLAINTEXT://" + addr
}
