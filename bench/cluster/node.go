package cluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/weirmq/weir/bench/brokerbench"
)

// node is one `weir serve` of a cluster: its fixed addresses, data
// directory and log file survive restarts, the process does not. The
// process runs in its own process group (so a signal reaches all of it)
// and dies with this process (Pdeathsig).
type node struct {
	id     int32
	kafka  string // Kafka listener host:port
	gossip string // gossip host:port
	data   string // data directory
	logPth string // the output of every start, appended
	path   string // weir binary
	args   []string
	env    []string
	// wrap, when set, turns the command line into one that runs it where
	// the node is placed (Placement.Wrap).
	wrap func(path string, args []string) (string, []string)

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{} // closed when the current process was reaped
	starts int
}

// readyPrefix opens the line `weir serve` prints once it serves.
const readyPrefix = "weir serving node"

// start runs the node's process and waits until it prints its ready line,
// for at most timeout. The previous process must have exited.
func (n *node) start(ctx context.Context, timeout time.Duration) error {
	n.mu.Lock()
	if n.cmd != nil {
		select {
		case <-n.exited:
		default:
			n.mu.Unlock()
			return fmt.Errorf("node %d: still running", n.id)
		}
	}
	logf, err := os.OpenFile(n.logPth, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		n.mu.Unlock()
		return fmt.Errorf("node %d: log file: %w", n.id, err)
	}
	n.starts++
	fmt.Fprintf(logf, "=== bench: start %d of node %d at %s\n", n.starts, n.id, time.Now().UTC().Format(time.RFC3339Nano))
	path, args := n.path, n.args
	if n.wrap != nil {
		path, args = n.wrap(path, args)
	}
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), n.env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	pr, pw, err := os.Pipe()
	if err != nil {
		logf.Close()
		n.mu.Unlock()
		return fmt.Errorf("node %d: pipe: %w", n.id, err)
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		logf.Close()
		n.mu.Unlock()
		return fmt.Errorf("node %d: start %s: %w", n.id, n.path, err)
	}
	pw.Close()
	exited := make(chan struct{})
	ready := make(chan struct{})
	n.cmd, n.exited = cmd, exited
	n.mu.Unlock()

	go copyOutput(pr, logf, ready)
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-ready:
		return nil
	case <-exited:
		return fmt.Errorf("node %d exited before it was ready (%v); see %s", n.id, cmd.ProcessState, n.logPth)
	case <-timer.C:
		n.kill()
		return fmt.Errorf("node %d not ready after %v; see %s", n.id, timeout, n.logPth)
	case <-ctx.Done():
		n.kill()
		return fmt.Errorf("node %d: waiting for it: %w", n.id, context.Cause(ctx))
	}
}

// copyOutput copies the child's output into its log file and closes ready
// at the ready line.
func copyOutput(r io.ReadCloser, logf *os.File, ready chan struct{}) {
	defer r.Close()
	defer logf.Close()
	br := bufio.NewReaderSize(r, 64<<10)
	isReady := false
	for {
		line, err := br.ReadString('\n')
		if len(line) > 0 {
			_, _ = logf.WriteString(line)
			if !isReady && strings.HasPrefix(line, readyPrefix) {
				isReady = true
				close(ready)
			}
		}
		if err != nil {
			return
		}
	}
}

// pid returns the current process's id, 0 when none was started.
func (n *node) pid() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil {
		return 0
	}
	return n.cmd.Process.Pid
}

// running reports whether the current process is alive (not yet reaped).
func (n *node) running() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil {
		return false
	}
	select {
	case <-n.exited:
		return false
	default:
		return true
	}
}

// signal sends sig to the node's process group.
func (n *node) signal(sig syscall.Signal) error {
	pid := n.pid()
	if pid == 0 {
		return fmt.Errorf("node %d: not started", n.id)
	}
	if err := syscall.Kill(-pid, sig); err != nil {
		return fmt.Errorf("node %d: signal %v: %w", n.id, sig, err)
	}
	return nil
}

// kill sends SIGKILL to the node's process group and waits until the
// process was reaped. Killing a node that is not running does nothing.
func (n *node) kill() {
	n.mu.Lock()
	cmd, exited := n.cmd, n.exited
	n.mu.Unlock()
	if cmd == nil {
		return
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		_ = cmd.Process.Kill()
	}
	<-exited
}

// rss returns the process's resident set size in bytes.
func (n *node) rss() (int64, error) { return brokerbench.ReadRSS(n.pid()) }

// cpu returns the CPU time the current process has spent.
func (n *node) cpu() (time.Duration, error) { return brokerbench.ReadProcessCPU(n.pid()) }

// freeLoopbackAddrs returns n addresses 127.0.0.1:port on distinct ports
// that were free a moment ago.
func freeLoopbackAddrs(n int) ([]string, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var out []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("pick a free loopback port: %w", err)
		}
		ls = append(ls, l)
		out = append(out, l.Addr().String())
	}
	return out, nil
}
