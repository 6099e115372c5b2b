package harness

import (
	"fmt"
	"path/filepath"

	"github.com/weirmq/weir/internal/netns"
)

// InNetns returns opts changed to run inside h's namespace: the program
// (the weir binary of BuildWeir when opts.Path is empty) goes through ip
// netns exec (netns.Host.Command), and Name defaults to the program's
// base name and the host's index. Pass the result to Start or Spawn.
// Readiness by ReadyLine works as usual; ReadyAddr, which the harness
// keeps to loopback, does not apply.
func InNetns(h *netns.Host, opts Options) (Options, error) {
	path := opts.Path
	if path == "" {
		var err error
		if path, err = BuildWeir(); err != nil {
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
