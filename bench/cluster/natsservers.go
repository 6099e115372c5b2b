package cluster

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// NATSServersConfig sizes StartNATSServers.
type NATSServersConfig struct {
	// Exec runs this program again as one NATS server; the program must
	// call ServeNATSChild first.
	Exec []string
	// TempDir holds the servers' stores; empty means os.TempDir().
	TempDir string
	// Keep keeps the stores.
	Keep bool
	// Servers is the cluster size. Default 3.
	Servers int
	// SyncAlways fsyncs every write before it is acknowledged
	// (nats-server's sync_interval "always").
	SyncAlways bool
	// StartTimeout bounds each server's start. Default 60 s.
	StartTimeout time.Duration
}

// NATSServers is a NATS JetStream cluster on loopback for another
// benchmark (bench/failover's --compare nats): each server a child
// process running nats-server from its Go module, so that it can be
// SIGKILLed, SIGSTOPped or SIGTERMed as a weir node is. Servers are
// numbered 0 to Len()-1 and named n1, n2, ...
type NATSServers struct {
	nc   *natsCluster
	dir  string
	keep bool
}

// StartNATSServers starts cfg.Servers servers (every one with JetStream,
// file storage, and a monitoring port) and waits until each accepts
// clients.
func StartNATSServers(cfg NATSServersConfig) (*NATSServers, error) {
	if cfg.Servers == 0 {
		cfg.Servers = 3
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = time.Minute
	}
	dir, err := natsDir(cfg.TempDir)
	if err != nil {
		return nil, fmt.Errorf("NATS servers: %w", err)
	}
	nc, err := newNATSCluster(cfg.Exec, dir, cfg.Servers)
	if err == nil {
		for i := range nc.specs {
			nc.specs[i].SyncAlways = cfg.SyncAlways
		}
		err = nc.startAll(cfg.StartTimeout)
	}
	if err != nil {
		if !cfg.Keep {
			_ = os.RemoveAll(dir)
		}
		return nil, fmt.Errorf("NATS servers: %w", err)
	}
	return &NATSServers{nc: nc, dir: dir, keep: cfg.Keep}, nil
}

// NATSServerVersion is the nats-server module's version.
func NATSServerVersion() string { return moduleVersion("github.com/nats-io/nats-server/v2") }

// NATSClientVersion is the nats.go module's version.
func NATSClientVersion() string { return moduleVersion("github.com/nats-io/nats.go") }

// Len is the number of servers.
func (s *NATSServers) Len() int { return len(s.nc.specs) }

// Name is server i's server name, as stream and cluster infos name it.
func (s *NATSServers) Name(i int) string { return s.nc.specs[i].Name }

// Index returns the server named name, or -1.
func (s *NATSServers) Index(name string) int {
	for i, sp := range s.nc.specs {
		if sp.Name == name {
			return i
		}
	}
	return -1
}

// URL is server i's client URL.
func (s *NATSServers) URL(i int) string { return s.nc.url(i) }

// URLs are every server's client URLs, comma-separated.
func (s *NATSServers) URLs() string { return s.nc.urls() }

// MonitorURL is server i's monitoring endpoint (http://host:port).
func (s *NATSServers) MonitorURL(i int) string {
	return fmt.Sprintf("http://127.0.0.1:%d", s.nc.specs[i].MonitorPort)
}

// Dir is the servers' parent directory.
func (s *NATSServers) Dir() string { return s.dir }

// Running reports whether server i's process runs (a SIGSTOPped one
// included).
func (s *NATSServers) Running(i int) bool {
	p := s.nc.proc(i)
	if p == nil {
		return false
	}
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// Signal sends sig to server i's process group.
func (s *NATSServers) Signal(i int, sig syscall.Signal) error {
	p := s.nc.proc(i)
	if p == nil {
		return fmt.Errorf("NATS server %s is not running", s.Name(i))
	}
	if err := syscall.Kill(-p.cmd.Process.Pid, sig); err != nil {
		return fmt.Errorf("NATS server %s: %v: %w", s.Name(i), sig, err)
	}
	return nil
}

// Kill SIGKILLs server i (if it runs) and waits until it was reaped.
func (s *NATSServers) Kill(i int) { s.nc.kill(i) }

// WaitExited waits until server i's process is gone (after a SIGTERM),
// for at most timeout.
func (s *NATSServers) WaitExited(i int, timeout time.Duration) error {
	p := s.nc.proc(i)
	if p == nil {
		return nil
	}
	select {
	case <-p.exited:
		s.nc.setProc(i, nil)
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("NATS server %s still running %v after it was told to stop", s.Name(i), timeout)
	}
}

// Start starts server i again (same ports and store) and waits until it
// accepts clients, for at most timeout.
func (s *NATSServers) Start(i int, timeout time.Duration) error {
	if s.Running(i) {
		return errors.New("NATS server " + s.Name(i) + " is already running")
	}
	return s.nc.start(i, timeout)
}

// Close stops every server (a clean shutdown, then SIGKILL after 10 s)
// and removes their stores unless kept.
func (s *NATSServers) Close() {
	s.nc.close()
	if !s.keep {
		_ = os.RemoveAll(s.dir)
	}
}
