package chaos

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/weirmq/weir/internal/harness"
)

// lowestPort is the bottom of the range fixed node ports are drawn from.
const lowestPort = 10000

// fixedPorts returns n distinct ports on 127.0.0.1, free for TCP and UDP
// a moment ago, drawn below the kernel's ephemeral range. A node keeps its
// ports across restarts, and while it is down its clients keep dialing
// it: a port inside the ephemeral range could meanwhile become the local
// end of some connection (even a self-connection to the dead address),
// and the restarted node would fail to bind it. Below the range no
// outgoing connection takes it.
func fixedPorts(n int) ([]int, error) {
	top := ephemeralLow()
	if top-lowestPort < 10*n {
		return nil, fmt.Errorf("chaos: ephemeral range starts at %d: too few ports below it", top)
	}
	var held []func()
	defer func() {
		for _, release := range held {
			release()
		}
	}()
	seen := map[int]bool{}
	var ports []int
	for tries := 0; len(ports) < n; tries++ {
		if tries > 1000 {
			return nil, fmt.Errorf("chaos: no %d free ports below %d", n, top)
		}
		p := lowestPort + rand.IntN(top-lowestPort)
		if seen[p] {
			continue
		}
		seen[p] = true
		release, ok := hold(p)
		if !ok {
			continue
		}
		held = append(held, release)
		ports = append(ports, p)
	}
	return ports, nil
}

// hold binds port for TCP and UDP (gossip uses both) and returns the
// function that releases it.
func hold(port int) (func(), bool) {
	addr := harness.Addr(port)
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, false
	}
	u, err := net.ListenPacket("udp", addr)
	if err != nil {
		l.Close()
		return nil, false
	}
	return func() { l.Close(); u.Close() }, true
}

// ephemeralLow is the first port of the kernel's ephemeral range (Linux;
// IANA's 49152 elsewhere).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 49152
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 49152
	}
	lo, err := strconv.Atoi(f[0])
	if err != nil {
		return 49152
	}
	return lo
}
