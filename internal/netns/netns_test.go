package netns_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weirmq/weir/internal/harness"
	"github.com/weirmq/weir/internal/netns"
)

func TestMain(m *testing.M) { harness.Main(m) }

// Timeouts: a dial or read that must succeed gets long enough for a
// loaded machine; one that must fail (a cut link) waits this long to show
// nothing gets through.
const (
	mustWork  = 10 * time.Second
	mustBlock = 500 * time.Millisecond
)

// echoServer listens for TCP inside h on :port and echoes each line back
// with the host's index prefixed, until the test ends.
func echoServer(t *testing.T, h *netns.Host, port int) {
	t.Helper()
	l, err := h.Listen("tcp", ":"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				sc := bufio.NewScanner(c)
				for sc.Scan() {
					if _, err := fmt.Fprintf(c, "%d:%s\n", h.Index, sc.Text()); err != nil {
						return
					}
				}
			}()
		}
	}()
}

// udpEcho answers each datagram inside h on :port with the host's index
// and the datagram, until the test ends.
func udpEcho(t *testing.T, h *netns.Host, port int) {
	t.Helper()
	c, err := h.ListenPacket("udp", ":"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := c.ReadFrom(buf)
			if err != nil {
				return
			}
			_, _ = c.WriteTo(fmt.Appendf(nil, "%d:%s", h.Index, buf[:n]), from)
		}
	}()
}

// roundTrip sends line over c and returns the answer, or an error when
// none comes within timeout.
func roundTrip(c net.Conn, line string, timeout time.Duration) (string, error) {
	if err := c.SetDeadline(time.Now().Add(timeout)); err != nil {
		return "", err
	}
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		return "", err
	}
	ans, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSuffix(ans, "\n"), err
}

// udpRoundTrip sends msg from inside from (nil: the test's namespace) to
// addr and returns the answer, or an error when none comes within
// timeout.
func udpRoundTrip(from *netns.Host, addr, msg string, timeout time.Duration) (string, error) {
	var c net.Conn
	var err error
	if from == nil {
		c, err = net.Dial("udp", addr)
	} else {
		c, err = from.Dial("udp", addr, timeout)
	}
	if err != nil {
		return "", err
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(timeout)); err != nil {
		return "", err
	}
	if _, err := io.WriteString(c, msg); err != nil {
		return "", err
	}
	buf := make([]byte, 1500)
	n, err := c.Read(buf)
	return string(buf[:n]), err
}

// dial connects from inside from (nil: the test's namespace) to addr.
func dial(from *netns.Host, addr string, timeout time.Duration) (net.Conn, error) {
	if from == nil {
		return net.DialTimeout("tcp", addr, timeout)
	}
	return from.Dial("tcp", addr, timeout)
}

// checkTCP checks that a line sent from from to host to reaches it and is
// answered.
func checkTCP(t *testing.T, from, to *netns.Host, port int) {
	t.Helper()
	c, err := dial(from, to.HostPort(port), mustWork)
	if err != nil {
		t.Fatalf("%s -> host %d: %v", name(from), to.Index, err)
	}
	defer c.Close()
	if ans, err := roundTrip(c, "ping", mustWork); err != nil || ans != fmt.Sprintf("%d:ping", to.Index) {
		t.Fatalf("%s -> host %d: answer %q, %v", name(from), to.Index, ans, err)
	}
}

// checkBlocked checks that neither a TCP connection nor a UDP datagram
// from from reaches to, and that the attempt fails by timing out (the
// packets vanish) rather than by a refusal.
func checkBlocked(t *testing.T, from, to *netns.Host, port int) {
	t.Helper()
	c, err := dial(from, to.HostPort(port), mustBlock)
	if err == nil {
		c.Close()
		t.Fatalf("host %d -> host %d: connected across the cut", from.Index, to.Index)
	}
	if !isTimeout(err) {
		t.Errorf("host %d -> host %d: dial failed with %v, want a timeout (dropped packets)", from.Index, to.Index, err)
	}
	if ans, err := udpRoundTrip(from, to.HostPort(port), "hello", mustBlock); err == nil {
		t.Errorf("host %d -> host %d: UDP answered %q across the cut", from.Index, to.Index, ans)
	} else if !isTimeout(err) {
		t.Errorf("host %d -> host %d: UDP failed with %v, want a timeout", from.Index, to.Index, err)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func name(h *netns.Host) string {
	if h == nil {
		return "the test's namespace"
	}
	return fmt.Sprintf("host %d", h.Index)
}

// TestHostsReachEachOther: on a new network the test's namespace reaches
// every host, over TCP and UDP, and every host reaches every other.
func TestHostsReachEachOther(t *testing.T) {
	nw := netns.New(t, 3)
	const port = 7000
	for _, h := range nw.Hosts {
		if !nw.Prefix.Contains(h.Addr) || h.Addr == nw.Gateway {
			t.Errorf("host %d: address %v outside %v or the gateway's", h.Index, h.Addr, nw.Prefix)
		}
		echoServer(t, h, port)
		udpEcho(t, h, port)
	}
	for _, to := range nw.Hosts {
		checkTCP(t, nil, to, port)
		if ans, err := udpRoundTrip(nil, to.HostPort(port), "hi", mustWork); err != nil || ans != fmt.Sprintf("%d:hi", to.Index) {
			t.Errorf("UDP to host %d: %q, %v", to.Index, ans, err)
		}
		for _, from := range nw.Hosts {
			if from != to {
				checkTCP(t, from, to, port)
			}
		}
	}
	// Each host's namespace has its own address and no other.
	for _, h := range nw.Hosts {
		stdout, stderr, code := harness.Run(t, wrap(t, h, harness.Options{Path: "ip", Args: []string{"-o", "-4", "addr", "show"}}))
		if code != 0 {
			t.Fatalf("ip addr in host %d: exit %d: %s", h.Index, code, stderr)
		}
		for _, other := range append(slices.Clone(nw.Hosts), &netns.Host{Index: -1, Addr: nw.Gateway}) {
			has := strings.Contains(stdout, " "+other.Addr.String()+"/")
			if has != (other == h) {
				t.Errorf("host %d: ip addr shows %v: %v, want %v:\n%s", h.Index, other.Addr, has, other == h, stdout)
			}
		}
	}
}

func wrap(t *testing.T, h *netns.Host, opts harness.Options) harness.Options {
	t.Helper()
	o, err := harness.InNetns(h, opts)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestCutAndHeal: a cut drops everything between a host and the peers
// named, both ways and silently (timeouts, not refusals), stalls a TCP
// connection that was open, and leaves the host's other links alone; the
// heal restores the links, and the stalled connection delivers what was
// sent meanwhile.
func TestCutAndHeal(t *testing.T) {
	nw := netns.New(t, 3)
	const port = 7000
	for _, h := range nw.Hosts {
		echoServer(t, h, port)
		udpEcho(t, h, port)
	}
	a, b, c := nw.Host(0), nw.Host(1), nw.Host(2)
	open, err := a.Dial("tcp", b.HostPort(port), mustWork)
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	if ans, err := roundTrip(open, "before", mustWork); err != nil || ans != "1:before" {
		t.Fatalf("before the cut: %q, %v", ans, err)
	}

	if err := a.Cut(b); err != nil {
		t.Fatal(err)
	}
	checkBlocked(t, a, b, port)
	checkBlocked(t, b, a, port)
	checkTCP(t, a, c, port)
	checkTCP(t, c, a, port)
	checkTCP(t, nil, a, port)
	checkTCP(t, b, c, port)
	// The open connection stalls: the line goes out, nothing comes back.
	if ans, err := roundTrip(open, "during", mustBlock); err == nil || !isTimeout(err) {
		t.Fatalf("open connection across the cut: answer %q, %v; want a timeout", ans, err)
	}
	if rules, err := a.Ruleset(); err != nil || !strings.Contains(rules, b.Addr.String()) {
		t.Errorf("host 0's ruleset does not name host 1's address (%v):\n%s", err, rules)
	}

	// Cutting from every other host replaces the first cut.
	if err := a.Cut(); err != nil {
		t.Fatal(err)
	}
	checkBlocked(t, a, c, port)
	checkBlocked(t, c, a, port)
	checkTCP(t, nil, a, port)

	if err := a.Heal(); err != nil {
		t.Fatal(err)
	}
	// The stalled line was retransmitted: its answer arrives now.
	if err := open.SetDeadline(time.Now().Add(mustWork)); err != nil {
		t.Fatal(err)
	}
	if ans, err := bufio.NewReader(open).ReadString('\n'); err != nil || ans != "1:during\n" {
		t.Fatalf("open connection after the heal: %q, %v", ans, err)
	}
	for _, pair := range [][2]*netns.Host{{a, b}, {b, a}, {a, c}, {c, a}} {
		checkTCP(t, pair[0], pair[1], port)
	}
	if ans, err := udpRoundTrip(a, b.HostPort(port), "again", mustWork); err != nil || ans != "1:again" {
		t.Errorf("UDP after the heal: %q, %v", ans, err)
	}
	if err := a.Heal(); err != nil {
		t.Errorf("a second heal: %v", err)
	}
	if err := a.Cut(a); err == nil {
		t.Error("cutting a host from itself succeeded")
	}
}

// TestCloseRemovesEverything: once the test that made a network ends,
// passed or failed, its namespaces and interfaces are gone, and so are
// the processes it left running inside.
func TestCloseRemovesEverything(t *testing.T) {
	var nw *netns.Network
	var proc *exec.Cmd
	t.Run("make", func(t *testing.T) {
		nw = netns.New(t, 2)
		// A process the test leaves running in a namespace (outside the
		// harness, which would kill it itself).
		path, args := nw.Host(1).Command("sleep", "300")
		proc = exec.Command(path, args...)
		if err := proc.Start(); err != nil {
			t.Fatal(err)
		}
	})
	if nw == nil {
		t.Fatal("no network made")
	}
	exited := make(chan error, 1)
	go func() { exited <- proc.Wait() }()
	select {
	case <-exited:
	case <-time.After(mustWork):
		proc.Process.Kill()
		t.Fatal("the process left in a namespace still runs after cleanup")
	}
	names := []string{nw.Bridge}
	for _, h := range nw.Hosts {
		names = append(names, h.Name, h.Port)
	}
	waitGone(t, names)
}

// waitGone waits until no namespace and no interface has one of names.
func waitGone(t *testing.T, names []string) {
	t.Helper()
	deadline := time.Now().Add(mustWork)
	for {
		left := present(t, names)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still present after cleanup: %v", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// present returns those of names that are a namespace or an interface.
func present(t *testing.T, names []string) []string {
	t.Helper()
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		t.Fatal(err)
	}
	nss := strings.Fields(string(out))
	var left []string
	for _, n := range names {
		if _, err := net.InterfaceByName(n); err == nil || slices.Contains(nss, n) {
			left = append(left, n)
		}
	}
	return left
}

// TestRemoveLeftovers: the namespaces and bridges of a process that died
// before its cleanup are removed; those of a live process are not.
func TestRemoveLeftovers(t *testing.T) {
	netns.Require(t)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	deadTag := strconv.FormatInt(int64(dead.Process.Pid), 36) + "-zzz"
	liveTag := strconv.FormatInt(int64(os.Getpid()), 36) + "-zzy"
	made := map[string][]string{}
	for _, tag := range []string{deadTag, liveTag} {
		ns, br := "wnn"+tag+"h0", "wnb"+tag
		made[tag] = []string{ns, br}
		t.Cleanup(func() {
			exec.Command("ip", "netns", "del", ns).Run()
			exec.Command("ip", "link", "del", br).Run()
		})
		for _, args := range [][]string{{"netns", "add", ns}, {"link", "add", br, "type", "bridge"}} {
			if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
				t.Fatalf("ip %v: %v: %s", args, err, out)
			}
		}
	}
	removed, err := netns.RemoveLeftovers()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range made[deadTag] {
		if !slices.Contains(removed, n) {
			t.Errorf("leftover %s of dead process %d not reported removed (removed: %v)", n, dead.Process.Pid, removed)
		}
	}
	waitGone(t, made[deadTag])
	if left := present(t, made[liveTag]); len(left) != 2 {
		t.Errorf("of this live process's %v only %v are left", made[liveTag], left)
	}
}
