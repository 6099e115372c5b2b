package netns

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// MaxHosts is the most hosts a Network holds: its /24 has the bridge at
// .1 and hosts from .2 up, and a veth end's name must fit IFNAMSIZ.
const MaxHosts = 250

// hostLink is the name of each host's interface inside its namespace.
const hostLink = "eth0"

// Network is a bridge in the test's namespace and hosts in namespaces of
// their own, each linked to the bridge by a veth pair. Make one with
// Open, and remove it with Close; or, in a test, with New, whose cleanup
// removes it.
type Network struct {
	// Tag is the unique part of every name the network uses.
	Tag string
	// Bridge is the bridge interface in the test's (root) namespace.
	Bridge string
	// Prefix is the network's subnet, a 10.231.x.0/24.
	Prefix netip.Prefix
	// Gateway is the bridge's address: the address the test process
	// (a client) has on the network, and reaches every host from.
	Gateway netip.Addr
	// Hosts are the namespaces, in order; Hosts[i] has the address .i+2.
	Hosts []*Host
	// Removed names the leftovers of dead runs Open removed, and
	// LeftoverErr says why some could not be (they do not stop a new
	// network: its names and subnet are its own).
	Removed     []string
	LeftoverErr error

	mu     sync.Mutex
	closed bool
}

// Host is one network namespace of a Network, with one address.
type Host struct {
	// Index is the host's position in Network.Hosts.
	Index int
	// Name is the namespace's name, as `ip netns` knows it.
	Name string
	// Addr is the host's address, on its interface Link.
	Addr netip.Addr
	// Link is the host's interface inside its namespace.
	Link string
	// Port is the host's veth end in the test's namespace: a bridge port.
	Port string

	net *Network
}

// subnetMu serializes the choice and the claim of a subnet within this
// process, so two networks made at once never pick the same one.
var subnetMu sync.Mutex

// Open builds a network of n hosts (1 <= n <= MaxHosts), for a program
// that is not a test (a benchmark injecting network partitions); the
// caller must Close it. It returns an error, saying what is missing, when
// Available reports one. It first removes what earlier runs that died
// before their cleanup left behind (see Network.Removed). A network that
// fails half-built is removed before Open returns.
func Open(n int) (*Network, error) {
	if err := Available(); err != nil {
		return nil, fmt.Errorf("netns: network namespaces unusable: %w", err)
	}
	if n < 1 || n > MaxHosts {
		return nil, fmt.Errorf("netns: %d hosts: want 1 to %d", n, MaxHosts)
	}
	removed, lerr := RemoveLeftovers()
	tag, err := newTag()
	if err != nil {
		return nil, err
	}
	nw := &Network{Tag: tag, Bridge: bridgeName(tag), Removed: removed, LeftoverErr: lerr}
	if err := nw.build(n); err != nil {
		return nil, errors.Join(err, nw.Close())
	}
	return nw, nil
}

// New builds a network of n hosts for a test, as Open does, and registers
// the cleanup that removes it when the test ends. It calls Require first,
// so the test skips where namespaces are unusable. Any failure fails the
// test.
func New(tb TB, n int) *Network {
	tb.Helper()
	Require(tb)
	nw, err := Open(n)
	if err != nil {
		tb.Fatalf("%v", err)
	}
	tb.Cleanup(func() {
		if err := nw.Close(); err != nil {
			tb.Errorf("%v", err)
		}
	})
	if nw.LeftoverErr != nil {
		tb.Logf("netns: removing leftovers of earlier runs: %v", nw.LeftoverErr)
	} else if len(nw.Removed) > 0 {
		tb.Logf("netns: removed leftovers of earlier runs: %s", strings.Join(nw.Removed, " "))
	}
	return nw
}

// build creates the bridge and the hosts.
func (nw *Network) build(n int) error {
	if _, err := ip("link", "add", nw.Bridge, "type", "bridge"); err != nil {
		return err
	}
	if err := nw.claimSubnet(); err != nil {
		return err
	}
	if _, err := ip("link", "set", nw.Bridge, "up"); err != nil {
		return err
	}
	for i := range n {
		h := &Host{Index: i, Name: nsName(nw.Tag, i), Addr: hostAddr(nw.Prefix, i), Link: hostLink,
			Port: vethName(nw.Tag, i), net: nw}
		if len(h.Port) > maxIfName {
			return fmt.Errorf("netns: interface name %q longer than %d bytes", h.Port, maxIfName)
		}
		nw.Hosts = append(nw.Hosts, h)
		if err := h.build(); err != nil {
			return err
		}
	}
	return nil
}

// build creates the host's namespace and its link to the bridge.
func (h *Host) build() error {
	nw := h.net
	bits := strconv.Itoa(nw.Prefix.Bits())
	steps := [][]string{
		{"netns", "add", h.Name},
		{"link", "add", h.Port, "type", "veth", "peer", "name", h.Link, "netns", h.Name},
		{"link", "set", h.Port, "master", nw.Bridge},
		{"link", "set", h.Port, "up"},
		{"-n", h.Name, "addr", "add", h.Addr.String() + "/" + bits, "dev", h.Link},
		{"-n", h.Name, "link", "set", h.Link, "up"},
		{"-n", h.Name, "link", "set", "lo", "up"},
	}
	for _, s := range steps {
		if _, err := ip(s...); err != nil {
			return fmt.Errorf("netns: host %d: %w", h.Index, err)
		}
	}
	return nil
}

// hostAddr is host i's address in p: .i+2.
func hostAddr(p netip.Prefix, i int) netip.Addr {
	a := p.Addr().As4()
	a[3] = byte(i + 2)
	return netip.AddrFrom4(a)
}

// gatewayAddr is the bridge's address in p: .1.
func gatewayAddr(p netip.Prefix) netip.Addr {
	a := p.Addr().As4()
	a[3] = 1
	return netip.AddrFrom4(a)
}

// claimSubnet picks a 10.231.x.0/24 that no address or route of the
// test's namespace overlaps and gives the bridge its first address.
func (nw *Network) claimSubnet() error {
	subnetMu.Lock()
	defer subnetMu.Unlock()
	used, err := usedPrefixes()
	if err != nil {
		return err
	}
	tag, _ := tagOwner(nw.Tag)
	start := tag + int(nw.Tag[len(nw.Tag)-1]) // spread processes over the range
	for k := range 256 {
		x := (start + k) % 256
		p := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 231, byte(x), 0}), 24)
		if overlapsAny(p, used) {
			continue
		}
		nw.Prefix = p
		nw.Gateway = gatewayAddr(p)
		_, err := ip("addr", "add", nw.Gateway.String()+"/24", "dev", nw.Bridge)
		return err
	}
	return errors.New("netns: every 10.231.x.0/24 is in use")
}

// usedPrefixes lists the IPv4 addresses and routes of the test's
// namespace, as prefixes.
func usedPrefixes() ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, args := range [][]string{{"-o", "-4", "addr", "show"}, {"-4", "route", "show", "table", "all"}} {
		text, err := ip(args...)
		if err != nil {
			return nil, err
		}
		for _, field := range strings.Fields(text) {
			if p, err := netip.ParsePrefix(field); err == nil && p.Addr().Is4() {
				out = append(out, p.Masked())
			} else if a, err := netip.ParseAddr(field); err == nil && a.Is4() {
				out = append(out, netip.PrefixFrom(a, 32))
			}
		}
	}
	return out, nil
}

func overlapsAny(p netip.Prefix, used []netip.Prefix) bool {
	for _, u := range used {
		// A default route (0.0.0.0/0) overlaps everything but claims nothing.
		if u.Bits() > 0 && u.Overlaps(p) {
			return true
		}
	}
	return false
}

// Host returns Hosts[i].
func (nw *Network) Host(i int) *Host { return nw.Hosts[i] }

// Close removes the network: it kills any process still inside a host's
// namespace, deletes the namespaces (and with them the veth pairs and
// their nftables rules) and the bridge. It is idempotent; New's cleanup
// calls it. Processes started inside with Host.Command die with it.
func (nw *Network) Close() error {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	if nw.closed {
		return nil
	}
	nw.closed = true
	var errs []error
	// Deleting a veth end here deletes the pair at once; left to the
	// namespace's deletion, the kernel destroys it in the background,
	// sometimes seconds later.
	for i := range nw.Hosts {
		errs = append(errs, removeLink(vethName(nw.Tag, i)))
	}
	for i := range nw.Hosts {
		errs = append(errs, removeNamespace(nsName(nw.Tag, i)))
	}
	errs = append(errs, removeLink(nw.Bridge))
	return errors.Join(errs...)
}

// linkExists reports whether the test's namespace has interface name.
func linkExists(name string) bool {
	_, err := net.InterfaceByName(name)
	return err == nil
}

// removeNamespace kills what still runs in namespace name and deletes
// it; a namespace that does not exist is not an error.
func removeNamespace(name string) error {
	if !namespaceExists(name) {
		return nil
	}
	if out, err := ip("netns", "pids", name); err == nil {
		for _, f := range strings.Fields(out) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	if _, err := ip("netns", "del", name); err != nil && namespaceExists(name) {
		return err
	}
	return nil
}

// removeLink deletes interface name of the test's namespace, if any.
func removeLink(name string) error {
	if !linkExists(name) {
		return nil
	}
	if _, err := ip("link", "del", name); err != nil && linkExists(name) {
		return err
	}
	return nil
}

// namespaceExists reports whether `ip netns` lists name.
func namespaceExists(name string) bool {
	names, err := namespaces()
	if err != nil {
		return true // let the delete try and report
	}
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

// namespaces lists the named network namespaces (ip netns list).
func namespaces() ([]string, error) {
	out, err := ip("netns", "list")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			names = append(names, f[0])
		}
	}
	return names, nil
}

// RemoveLeftovers deletes the namespaces and interfaces this package
// made for processes that no longer run (test binaries that crashed or
// were killed before their cleanup), and returns their names. Networks
// of live processes, this one's included, are left alone.
func RemoveLeftovers() ([]string, error) {
	var removed []string
	var errs []error
	names, err := namespaces()
	if err != nil {
		errs = append(errs, err)
	}
	for _, n := range names {
		if abandoned(n) {
			if err := removeNamespace(n); err != nil {
				errs = append(errs, err)
				continue
			}
			removed = append(removed, n)
		}
	}
	ifaces, err := net.Interfaces()
	if err != nil {
		errs = append(errs, fmt.Errorf("netns: list interfaces: %w", err))
	}
	for _, ifc := range ifaces {
		if abandoned(ifc.Name) {
			if err := removeLink(ifc.Name); err != nil {
				errs = append(errs, err)
				continue
			}
			removed = append(removed, ifc.Name)
		}
	}
	return removed, errors.Join(errs...)
}
