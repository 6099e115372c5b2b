package cluster

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weirmq/weir/cluster/config"
	"github.com/weirmq/weir/log"
)

// ErrInvalidConfig is a node configuration StartNode refuses, wrapped with
// detail.
var ErrInvalidConfig = errors.New("cluster: invalid config")

// Config is what StartNode builds a node from.
type Config struct {
	// Broker is the node's Kafka configuration (server.properties plus
	// flags). node.id, log.dirs (one directory), listeners and
	// advertised.listeners are read from it.
	Broker *config.Broker
	// Logger receives the node's log lines; nil uses slog.Default().
	Logger *slog.Logger
	// Listener, when set, is used instead of binding the listeners config
	// (tests hand in a 127.0.0.1:0 listener). The node closes it on Stop.
	Listener net.Listener
	// FS is the file system of the data directory; nil is the real one.
	FS log.FS
	// TickInterval is the node's ticker period: raft ticks and partition
	// ticks (long-poll deadlines, producer expiry). Default 50ms.
	TickInterval time.Duration
	// StartTimeout bounds StartNode's wait for the node to be ready
	// (registered, unfenced, its partitions led). Default 60s.
	StartTimeout time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// MetadataSnapshotEntries, when set, replaces the metadata quorum's
	// snapshot interval (quorum.Config.SnapshotEntries, default 10000
	// applied entries): a test seam, so that tests see the log compacted.
	MetadataSnapshotEntries uint64
	// OpenFileLimit, when set, replaces the process's RLIMIT_NOFILE in
	// the division of file descriptors (files.go): a test seam.
	OpenFileLimit uint64
}

// NewConfig returns a Config over broker, or over Kafka's defaults (with
// weir's departures) when broker is nil.
func NewConfig(broker *config.Broker) Config {
	if broker == nil {
		broker = config.NewBroker()
	}
	return Config{Broker: broker}
}

func (c *Config) setDefaults() {
	if c.Broker == nil {
		c.Broker = config.NewBroker()
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.FS == nil {
		c.FS = log.OSFS{}
	}
	if c.TickInterval <= 0 {
		c.TickInterval = 50 * time.Millisecond
	}
	if c.StartTimeout <= 0 {
		c.StartTimeout = 60 * time.Second
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// dataDir returns the one log directory.
func (c *Config) dataDir() (string, error) {
	dirs := c.Broker.LogDirs()
	if len(dirs) != 1 {
		return "", fmt.Errorf("%w: log.dirs %q: weir takes exactly one directory", ErrInvalidConfig, strings.Join(dirs, ","))
	}
	return dirs[0], nil
}

// listenAddr returns the host:port of the one listener.
func (c *Config) listenAddr() (string, error) {
	return c.oneListener("listeners", c.Broker.Listeners())
}

// advertisedAddr returns the host and port clients are told to use: the
// advertised listener, or the bound address when it advertises port 0 or
// a wildcard host.
func (c *Config) advertisedAddr(bound net.Addr) (string, int32, error) {
	addr, err := c.oneListener("advertised.listeners", c.Broker.AdvertisedListeners())
	if err != nil {
		return "", 0, err
	}
	host, port, err := splitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	if tcp, ok := bound.(*net.TCPAddr); ok {
		if port == 0 {
			port = int32(tcp.Port)
		}
		if host == "" || host == "0.0.0.0" || host == "::" {
			host = tcp.IP.String()
			if tcp.IP.IsUnspecified() {
				host = "127.0.0.1"
			}
		}
	}
	return host, port, nil
}

// oneListener returns the host:port of the one listener of list (the
// config name) that serves clients: entries named in
// controller.listener.names are skipped, as weir's quorum needs no Kafka
// listener, and the one left must map to PLAINTEXT in
// listener.security.protocol.map.
func (c *Config) oneListener(name string, list []string) (string, error) {
	controllers := c.Broker.List("controller.listener.names")
	var served []string
	for _, l := range list {
		if i := strings.Index(l, "://"); i < 0 || !slices.Contains(controllers, l[:i]) {
			served = append(served, l)
		}
	}
	if len(served) != 1 {
		return "", fmt.Errorf("%w: %s %q: weir serves exactly one listener (besides those in controller.listener.names)", ErrInvalidConfig, name, strings.Join(list, ","))
	}
	l := served[0]
	if i := strings.Index(l, "://"); i >= 0 {
		listener := l[:i]
		proto, err := c.securityProtocol(listener)
		if err != nil {
			return "", err
		}
		if proto != "PLAINTEXT" {
			return "", fmt.Errorf("%w: %s %q: listener %s is %s; only PLAINTEXT listeners are served", ErrInvalidConfig, name, l, listener, proto)
		}
		l = l[i+3:]
	}
	if _, _, err := splitHostPort(l); err != nil {
		return "", fmt.Errorf("%w: %s: %w", ErrInvalidConfig, name, err)
	}
	return l, nil
}

// securityProtocol maps a listener name to its security protocol through
// listener.security.protocol.map.
func (c *Config) securityProtocol(listener string) (string, error) {
	for _, pair := range strings.Split(c.Broker.String("listener.security.protocol.map"), ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(pair), ":")
		if !ok {
			return "", fmt.Errorf("%w: listener.security.protocol.map: %q is not NAME:PROTOCOL", ErrInvalidConfig, pair)
		}
		if k == listener {
			return v, nil
		}
	}
	return "", fmt.Errorf("%w: listener %s has no entry in listener.security.protocol.map", ErrInvalidConfig, listener)
}

func splitHostPort(addr string) (string, int32, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("%w: address %q: %w", ErrInvalidConfig, addr, err)
	}
	var port int
	if _, err := fmt.Sscanf(p, "%d", &port); err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("%w: address %q: bad port", ErrInvalidConfig, addr)
	}
	return host, int32(port), nil
}

// perIPOverrides parses max.connections.per.ip.overrides as Kafka does:
// comma-separated host:count pairs split at the last colon; a host name
// stands for every address it resolves to now.
func (c *Config) perIPOverrides() (map[netip.Addr]int, error) {
	const name = "max.connections.per.ip.overrides"
	s := strings.TrimSpace(c.Broker.String(name))
	if s == "" {
		return nil, nil
	}
	out := map[netip.Addr]int{}
	for _, pair := range strings.Split(s, ",") {
		pair = strings.TrimSpace(pair)
		i := strings.LastIndex(pair, ":")
		if i < 0 {
			return nil, fmt.Errorf("%w: %s: %q is not host:count", ErrInvalidConfig, name, pair)
		}
		host := strings.Trim(strings.TrimSpace(pair[:i]), "[]")
		n, err := strconv.Atoi(strings.TrimSpace(pair[i+1:]))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%w: %s: %q: the count must be a non-negative int", ErrInvalidConfig, name, pair)
		}
		if ip, err := netip.ParseAddr(host); err == nil {
			out[ip.Unmap()] = n
			continue
		}
		ips, err := net.LookupIP(host)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: resolve %q: %w", ErrInvalidConfig, name, host, err)
		}
		for _, ip := range ips {
			if a, ok := netip.AddrFromSlice(ip); ok {
				out[a.Unmap()] = n
			}
		}
	}
	return out, nil
}

// queuedMaxRequestBytes is queued.max.request.bytes, raised to
// socket.request.max.bytes when unset and smaller (a configured value
// below it is refused by wire.Config.Validate, as Kafka refuses it).
func (c *Config) queuedMaxRequestBytes() int64 {
	const name = "queued.max.request.bytes"
	v := c.Broker.Int(name)
	if _, set := c.Broker.Value(name); set {
		return v
	}
	return max(v, c.Broker.Int("socket.request.max.bytes"))
}
