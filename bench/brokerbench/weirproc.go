package brokerbench

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
)

// ReadyLine opens the line `weir serve` prints on stdout once it serves.
const ReadyLine = "weir serving node"

// tailBytes is how much of a child's output errors quote.
const tailBytes = 4 << 10

// weirProcess is `weir serve` running as a child process in its own
// process group.
type weirProcess struct {
	cmd    *exec.Cmd
	addr   string
	output *tail
	exited chan struct{} // closed once the child was waited for
	err    error         // the child's exit, valid once exited is closed
}

// startWeir starts `path serve --data dir --listen addr args...` with env
// added to this process's environment, and waits until it prints ReadyLine
// on stdout, for at most timeout.
func startWeir(ctx context.Context, path, dir string, args, env []string, timeout time.Duration) (*weirProcess, error) {
	addr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	argv := append([]string{"serve", "--data", dir, "--listen", addr}, args...)
	cmd := exec.Command(path, argv...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p := &weirProcess{cmd: cmd, addr: addr, output: &tail{}, exited: make(chan struct{})}
	cmd.Stderr = p.output
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("weir serve: stdout pipe: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s serve: %w", path, err)
	}
	ready := make(chan struct{})
	go p.scan(stdout, ready)
	if err := p.waitReady(ctx, ready, timeout); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// scan copies the child's stdout into the output tail, closes ready at the
// ready line, and reaps the child at the end of its output.
func (p *weirProcess) scan(stdout io.Reader, ready chan struct{}) {
	sc := bufio.NewScanner(stdout)
	isReady := false
	for sc.Scan() {
		line := sc.Text()
		p.output.Write([]byte(line + "\n"))
		if !isReady && strings.HasPrefix(line, ReadyLine) {
			isReady = true
			close(ready)
		}
	}
	p.err = p.cmd.Wait()
	close(p.exited)
}

// waitReady waits for the ready line, the child's exit, ctx or timeout.
func (p *weirProcess) waitReady(ctx context.Context, ready <-chan struct{}, timeout time.Duration) error {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-ready:
		return nil
	case <-p.exited:
		return fmt.Errorf("weir serve exited before it was ready (%v); its output ends:\n%s", p.err, p.output)
	case <-timer.C:
		return fmt.Errorf("weir serve not ready after %v; its output ends:\n%s", timeout, p.output)
	case <-ctx.Done():
		return fmt.Errorf("weir serve: waiting for it: %w", context.Cause(ctx))
	}
}

func (p *weirProcess) Addr() string { return p.addr }
func (p *weirProcess) PID() int     { return p.cmd.Process.Pid }

// Close kills the child's whole process group and waits for the child. It
// may be called more than once.
func (p *weirProcess) Close() error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	if err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill weir serve (pid %d): %w", p.cmd.Process.Pid, err)
	}
	<-p.exited
	return nil
}

// Exited reports whether the child has ended, with its output's tail.
func (p *weirProcess) Exited() (bool, string) {
	select {
	case <-p.exited:
		return true, p.output.String()
	default:
		return false, ""
	}
}

// freeLoopbackAddr returns 127.0.0.1:port for a port that was free a
// moment ago.
func freeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("pick a free loopback port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// tail keeps the last tailBytes written to it; it is safe for concurrent
// use.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - tailBytes; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
