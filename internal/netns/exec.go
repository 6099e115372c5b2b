package netns

import (
	"net"
	"strconv"
)

// Command returns the program and arguments that run path with args
// inside h's namespace: ip netns exec. ip execs the program in place, so
// the process started is the program itself (same pid), in its own
// process group under the harness.
func (h *Host) Command(path string, args ...string) (string, []string) {
	return "ip", append([]string{"netns", "exec", h.Name, path}, args...)
}

// HostPort returns "addr:port" for h's address.
func (h *Host) HostPort(port int) string {
	return net.JoinHostPort(h.Addr.String(), strconv.Itoa(port))
}
