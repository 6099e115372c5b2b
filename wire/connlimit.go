package wire

import (
	"fmt"
	"net"
	"net/netip"
)

// connLimits is the decision logic of max.connections,
// max.connections.per.ip and max.connections.per.ip.overrides (Kafka's
// ConnectionQuotas without listeners or rates): it counts the open
// connections in total and per client address and says whether one more
// may open. It holds no lock and does no I/O; the Server guards it with
// its mutex.
type connLimits struct {
	max       int
	perIP     int
	overrides map[netip.Addr]int
	total     int
	byIP      map[netip.Addr]int
}

func newConnLimits(cfg *Config) *connLimits {
	return &connLimits{
		max: cfg.MaxConnections, perIP: cfg.MaxConnectionsPerIP,
		overrides: cfg.MaxConnectionsPerIPOverrides, byIP: map[netip.Addr]int{},
	}
}

// errTooManyConnections is a refused connection's reason.
var errTooManyConnections = fmt.Errorf("wire: too many connections")

// admit counts a new connection from ip, or returns why it is refused
// (counting nothing). Like Kafka, the broker-wide limit is checked before
// the address's.
func (l *connLimits) admit(ip netip.Addr) error {
	if l.total >= l.max {
		return fmt.Errorf("%w: %d open, max.connections %d", errTooManyConnections, l.total, l.max)
	}
	limit, ok := l.overrides[ip]
	if !ok {
		limit = l.perIP
	}
	if n := l.byIP[ip]; n >= limit {
		return fmt.Errorf("%w: %d open from %s, max.connections.per.ip %d", errTooManyConnections, n, ip, limit)
	}
	l.total++
	l.byIP[ip]++
	return nil
}

// release uncounts a connection admitted before.
func (l *connLimits) release(ip netip.Addr) {
	l.total--
	if n := l.byIP[ip]; n <= 1 {
		delete(l.byIP, ip)
	} else {
		l.byIP[ip] = n - 1
	}
}

// remoteIP is the client address of a connection, IPv4 in IPv6 unmapped
// so that one client counts once however it is reached; the zero Addr for
// a non-IP connection (tests' pipes).
func remoteIP(a net.Addr) netip.Addr {
	if tcp, ok := a.(*net.TCPAddr); ok {
		ip, _ := netip.AddrFromSlice(tcp.IP)
		return ip.Unmap()
	}
	if ap, err := netip.ParseAddrPort(a.String()); err == nil {
		return ap.Addr().Unmap()
	}
	return netip.Addr{}
}
