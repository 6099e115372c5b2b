package groupbench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// Target names a broker under measurement.
type Target string

// The brokers a run measures.
const (
	Weir  Target = "weir"
	Kfake Target = "kfake"
)

// broker is one running broker.
type broker interface {
	Addr() string
	Close() error
}

// start starts a fresh broker of target t with its data in dir.
func (r *runner) start(ctx context.Context, t Target, dir string) (broker, error) {
	if t == Kfake {
		c, err := kfake.NewCluster(kfake.Ports(0), kfake.NumBrokers(1), kfake.DataDir(dir))
		if err != nil {
			return nil, fmt.Errorf("start kfake: %w", err)
		}
		return kfakeBroker{c}, nil
	}
	return startWeir(ctx, r.cfg, dir)
}

// kfakeBroker is kfake in this process.
type kfakeBroker struct{ c *kfake.Cluster }

func (k kfakeBroker) Addr() string { return k.c.ListenAddrs()[0] }
func (k kfakeBroker) Close() error { k.c.Close(); return nil }

// readyLine opens the line `weir serve` prints once it serves.
const readyLine = "weir serving node"

// weirProcess is `weir serve` as a child in its own process group.
type weirProcess struct {
	cmd    *exec.Cmd
	addr   string
	out    *lastLines
	exited chan struct{}
}

// startWeir starts `weir serve` on a free loopback port with
// group.initial.rebalance.delay.ms set to cfg.InitialRebalanceDelay and
// waits for its ready line.
func startWeir(ctx context.Context, cfg Config, dir string) (*weirProcess, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("pick a port: %w", err)
	}
	addr := l.Addr().String()
	l.Close()
	props := filepath.Join(dir, "bench.properties")
	conf := fmt.Sprintf("group.initial.rebalance.delay.ms=%d\n", cfg.InitialRebalanceDelay.Milliseconds())
	if err := os.WriteFile(props, []byte(conf), 0o644); err != nil {
		return nil, fmt.Errorf("write %s: %w", props, err)
	}
	args := append([]string{"serve", "--data", filepath.Join(dir, "data"), "--listen", addr, "--config", props}, cfg.WeirArgs...)
	cmd := exec.Command(cfg.WeirPath, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p := &weirProcess{cmd: cmd, addr: addr, out: &lastLines{}, exited: make(chan struct{})}
	cmd.Stderr = p.out
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("weir serve stdout: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s serve: %w", cfg.WeirPath, err)
	}
	ready := make(chan struct{})
	go p.scan(stdout, ready)
	timer := time.NewTimer(cfg.StartTimeout)
	defer timer.Stop()
	select {
	case <-ready:
		return p, nil
	case <-p.exited:
		err = fmt.Errorf("weir serve exited before it was ready; its output ends:\n%s", p.out)
	case <-timer.C:
		err = fmt.Errorf("weir serve not ready after %v; its output ends:\n%s", cfg.StartTimeout, p.out)
	case <-ctx.Done():
		err = context.Cause(ctx)
	}
	p.Close()
	return nil, err
}

// scan keeps the child's stdout, closes ready at the ready line and reaps
// the child at the end of its output.
func (p *weirProcess) scan(stdout io.Reader, ready chan struct{}) {
	sc := bufio.NewScanner(stdout)
	seen := false
	for sc.Scan() {
		p.out.Write([]byte(sc.Text() + "\n"))
		if !seen && strings.HasPrefix(sc.Text(), readyLine) {
			seen = true
			close(ready)
		}
	}
	_ = p.cmd.Wait()
	close(p.exited)
}

func (p *weirProcess) Addr() string { return p.addr }

// Close kills the process group and waits for the child.
func (p *weirProcess) Close() error {
	if err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill weir serve: %w", err)
	}
	<-p.exited
	return nil
}

// lastLines keeps the last 4 KiB written to it.
type lastLines struct {
	mu  sync.Mutex
	buf []byte
}

func (l *lastLines) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, b...)
	if over := len(l.buf) - 4096; over > 0 {
		l.buf = append(l.buf[:0], l.buf[over:]...)
	}
	return len(b), nil
}

func (l *lastLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.buf)
}
