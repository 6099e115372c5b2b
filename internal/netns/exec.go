package netns

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"

	"github.com/weirmq/weir/internal/harness"
)

// Command returns the program and arguments that run path with args
// inside h's namespace: ip netns exec. ip execs the program in place, so
// the process started is the program itself (same pid), in its own
// process group under the harness.
func (h *Host) Command(path string, args ...string) (string, []string) {
	return "ip", append([]string{"netns", "exec", h.Name, path}, args...)
}

// Wrap returns opts changed to run inside h's namespace: the program
// (the weir binary of harness.BuildWeir when opts.Path is empty) goes
// through ip netns exec, and Name defaults to the program's base name and
// the host's index. Pass the result to harness.Start or harness.Spawn.
// Readiness by ReadyLine works as usual; ReadyAddr, which the harness
// keeps to loopback, does not apply.
func (h *Host) Wrap(opts harness.Options) (harness.Options, error) {
	path := opts.Path
	if path == "" {
		var err error
		if path, err = harness.BuildWeir(); err != nil {
			return opts, err
		}
	}
	if opts.ReadyAddr != "" {
		return opts, fmt.Errorf("netns: host %d: ReadyAddr %q cannot be used inside a namespace; use ReadyLine", h.Index, opts.ReadyAddr)
	}
	if opts.Name == "" {
		opts.Name = fmt.Sprintf("%s@host%d", filepath.Base(path), h.Index)
	}
	opts.Path, opts.Args = h.Command(path, opts.Args...)
	return opts, nil
}

// HostPort returns "addr:port" for h's address.
func (h *Host) HostPort(port int) string {
	return net.JoinHostPort(h.Addr.String(), strconv.Itoa(port))
}
