package harness

import (
	"fmt"
	"net"
	"strconv"
	"testing"
)

// Loopback is the only address the harness listens on or hands out.
const Loopback = "127.0.0.1"

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago: the
// kernel picked it for a listener that is closed before returning. Another
// process may take it in between, as with any such helper.
func FreePort(tb testing.TB) int {
	tb.Helper()
	return FreePorts(tb, 1)[0]
}

// FreePorts returns n distinct free TCP ports on 127.0.0.1, all held open
// together while they are picked so no two are the same.
func FreePorts(tb testing.TB, n int) []int {
	tb.Helper()
	ports, err := freePorts(n)
	if err != nil {
		tb.Fatal(err)
	}
	return ports
}

// FreeAddr returns "127.0.0.1:port" for a free port.
func FreeAddr(tb testing.TB) string {
	tb.Helper()
	return Addr(FreePort(tb))
}

// Addr returns the loopback address "127.0.0.1:port".
func Addr(port int) string {
	return net.JoinHostPort(Loopback, strconv.Itoa(port))
}

func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", Addr(0))
		if err != nil {
			return nil, fmt.Errorf("harness: pick a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
