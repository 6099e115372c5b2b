package harness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// DefaultReadyTimeout bounds Start's wait for readiness when
// Options.ReadyTimeout is zero. It is generous: a loaded 2-core machine
// running several test binaries must not see false failures.
const DefaultReadyTimeout = 30 * time.Second

// ErrExited is wrapped by the errors of waits that ended because the
// process exited first, and by Signal on a process whose group is gone.
var ErrExited = errors.New("process exited")

const (
	tailLines      = 40                    // lines of each stream in reports
	dialPoll       = 20 * time.Millisecond // pause between readiness dials
	dialTimeout    = time.Second           // bound of one readiness dial
	waitDelay      = 10 * time.Second      // see exec.Cmd.WaitDelay
	cleanupTimeout = 30 * time.Second      // bound of the wait after SIGKILL
	logFileMode    = os.O_CREATE | os.O_WRONLY | os.O_TRUNC
)

// Options describes a process for Start, Spawn and Run.
type Options struct {
	// Path is the program to run; "" runs the weir binary of BuildWeir.
	Path string
	// Args are the arguments after the program name.
	Args []string
	// Env holds "KEY=value" entries added to the test's own environment;
	// an entry overrides an inherited one with the same key.
	Env []string
	// Dir is the working directory; "" keeps the test's (its package
	// directory under go test).
	Dir string
	// Name labels the process in errors, logs and its log file; "" means
	// the base name of the program.
	Name string
	// ReadyLine, when set, is a regular expression (package regexp) that a
	// line of stdout or stderr must match before the process is ready.
	// A plain substring without metacharacters works as is.
	ReadyLine string
	// ReadyAddr, when set, is a loopback TCP address ("127.0.0.1:port")
	// that must accept a connection before the process is ready. With
	// ReadyLine also set, both must hold.
	ReadyAddr string
	// ReadyTimeout bounds Start's wait for readiness; 0 means
	// DefaultReadyTimeout. WaitReady takes its bound from its context.
	ReadyTimeout time.Duration
	// NoFileLimit, when positive, sets the child's RLIMIT_NOFILE (soft and
	// hard) to it right after the child starts (prlimit(2)), so a test can
	// run a process at a low file limit without lowering its own. Files
	// the child opened before are not closed.
	NoFileLimit uint64
	// OnLine, when set, is called with each line of stdout, without its
	// line ending, as the process writes it: in order, one call at a
	// time, from a harness goroutine. An unterminated last line is passed
	// when the process exits. The child stalls on a full pipe while
	// OnLine runs, so it must not block for long.
	OnLine func(line string)
}

// Process is a running child started by Start or Spawn. It runs in its own
// process group; the test's cleanup sends SIGKILL to the whole group and
// waits for the child, so nothing it started outlives the test. Its
// stdout and stderr are kept in memory and copied to a log file. Methods
// are safe for concurrent use.
type Process struct {
	tb        testing.TB
	name      string
	cmd       *exec.Cmd
	out       *output
	logFile   *os.File
	ready     *regexp.Regexp // nil when Options.ReadyLine is empty
	readyAddr string

	tailShown atomic.Bool // the output tail was already reported

	done    chan struct{} // closed once the child exited and its output is drained
	code    int           // valid once done is closed
	waitErr error         // valid once done is closed
}

// Start starts a process as Spawn does and, when opts sets ReadyLine or
// ReadyAddr, waits until it is ready, for at most opts.ReadyTimeout. Any
// failure fails the test with the process's output tail, so call it from
// the test's goroutine.
func Start(tb testing.TB, opts Options) *Process {
	tb.Helper()
	p, err := Spawn(tb, opts)
	if err != nil {
		tb.Fatal(err)
	}
	timeout := opts.ReadyTimeout
	if timeout <= 0 {
		timeout = DefaultReadyTimeout
	}
	ctx, cancel := context.WithTimeout(tb.Context(), timeout)
	defer cancel()
	if err := p.WaitReady(ctx); err != nil {
		p.tailShown.Store(true) // the error holds it; cleanup need not repeat it
		tb.Fatal(err)
	}
	return p
}

// Spawn starts a process without waiting for readiness and registers the
// cleanup that kills its process group. It fails (returns an error) only
// when the process cannot be started; the weir binary is built on first
// use when opts.Path is empty.
func Spawn(tb testing.TB, opts Options) (*Process, error) {
	tb.Helper()
	path := opts.Path
	if path == "" {
		var err error
		if path, err = BuildWeir(); err != nil {
			return nil, err
		}
	}
	p, err := newProcess(tb, path, opts)
	if err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		p.logFile.Close()
		return nil, fmt.Errorf("harness: start %s: %w", p.name, err)
	}
	go p.reap()
	tb.Cleanup(p.cleanup)
	if opts.NoFileLimit > 0 {
		lim := unix.Rlimit{Cur: opts.NoFileLimit, Max: opts.NoFileLimit}
		if err := unix.Prlimit(p.Pid(), unix.RLIMIT_NOFILE, &lim, nil); err != nil {
			return nil, fmt.Errorf("harness: %s: set file limit %d: %w", p.name, opts.NoFileLimit, err)
		}
	}
	return p, nil
}

// Run starts a process, waits for it to exit and returns what it printed
// and its exit status (see Wait). It fails the test when the process cannot
// be started or waited for. For short commands such as `weir version`.
func Run(tb testing.TB, opts Options) (stdout, stderr string, code int) {
	tb.Helper()
	p, err := Spawn(tb, opts)
	if err != nil {
		tb.Fatal(err)
	}
	code, err = p.Wait()
	if err != nil {
		tb.Fatal(err)
	}
	return p.Stdout(), p.Stderr(), code
}

// newProcess prepares the command and its log file.
func newProcess(tb testing.TB, path string, opts Options) (*Process, error) {
	name := opts.Name
	if name == "" {
		name = filepath.Base(path)
	}
	p := &Process{tb: tb, name: name, readyAddr: opts.ReadyAddr, done: make(chan struct{})}
	if opts.ReadyLine != "" {
		re, err := regexp.Compile(opts.ReadyLine)
		if err != nil {
			return nil, fmt.Errorf("harness: %s: ReadyLine: %w", name, err)
		}
		p.ready = re
	}
	if opts.ReadyAddr != "" {
		if err := checkLoopback(opts.ReadyAddr); err != nil {
			return nil, fmt.Errorf("harness: %s: ReadyAddr: %w", name, err)
		}
	}
	logPath := filepath.Join(tb.TempDir(), strings.ReplaceAll(name, "/", "_")+".log")
	f, err := os.OpenFile(logPath, logFileMode, 0o644)
	if err != nil {
		return nil, fmt.Errorf("harness: %s: log file: %w", name, err)
	}
	p.logFile = f
	p.out = newOutput(f, opts.OnLine)

	cmd := exec.Command(path, opts.Args...)
	cmd.Dir = opts.Dir
	cmd.Env = append(os.Environ(), opts.Env...)
	cmd.Stdout = streamWriter{o: p.out, from: stdout}
	cmd.Stderr = streamWriter{o: p.out, from: stderr}
	// Its own group, so one kill reaches everything it starts; and killed
	// with the test binary if that dies first (a go test timeout).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = waitDelay
	p.cmd = cmd
	return p, nil
}

// checkLoopback refuses any address but a loopback one.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("%q is not a loopback address", addr)
	}
	return nil
}

// reap waits for the child, drains its output and publishes its status.
func (p *Process) reap() {
	err := p.cmd.Wait()
	p.out.flush()
	p.code = exitCode(p.cmd.ProcessState)
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		p.waitErr = fmt.Errorf("harness: wait for %s: %w", p.name, err)
	}
	close(p.done)
}

// exitCode returns the exit status, or 128+N when signal N ended the
// process, as a shell reports it.
func exitCode(ps *os.ProcessState) int {
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// cleanup kills the process group, waits for the child and, when the test
// failed, logs the tail of the output.
func (p *Process) cleanup() {
	state := p.state()
	if state == "running" {
		state = "killed at cleanup"
	}
	p.killGroup(syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(cleanupTimeout):
		p.tb.Errorf("harness: %s (pid %d) not reaped %v after SIGKILL", p.name, p.Pid(), cleanupTimeout)
	}
	p.logFile.Close()
	if p.tb.Failed() && !p.tailShown.Load() {
		p.tb.Logf("harness: %s (pid %d, %s):\n%s", p.name, p.Pid(), state, p.out.tailReport(p.name, tailLines))
	}
}

// state describes whether and how the process ended.
func (p *Process) state() string {
	select {
	case <-p.done:
		return fmt.Sprintf("exit status %d", p.code)
	default:
		return "running"
	}
}

// Name returns the label of the process (Options.Name or the program's
// base name).
func (p *Process) Name() string { return p.name }

// Pid returns the child's process id, which is also its process group id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// LogPath returns the file receiving a copy of stdout and stderr as they
// arrive; it lives in the test's TempDir and goes with it.
func (p *Process) LogPath() string { return p.logFile.Name() }

// Stdout returns everything the process wrote to stdout so far.
func (p *Process) Stdout() string { return string(p.out.bytes(stdout)) }

// Stderr returns everything the process wrote to stderr so far.
func (p *Process) Stderr() string { return string(p.out.bytes(stderr)) }

// Done returns a channel closed once the process has exited and all its
// output has been read; Wait then returns at once.
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait waits for the process to exit and returns its exit status: the
// status it exited with, or 128+N when signal N killed it (137 after
// Kill). The error is nil whenever the process ran to an end, whatever its
// status; it is non-nil only when waiting failed, for instance when a
// grandchild outside the group kept the output pipes open.
func (p *Process) Wait() (code int, err error) {
	<-p.done
	return p.code, p.waitErr
}

// Signal sends sig to the whole process group. It returns an error
// wrapping ErrExited when no process of the group is left.
func (p *Process) Signal(sig syscall.Signal) error {
	if err := syscall.Kill(-p.Pid(), sig); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("harness: signal %v to %s: %w", sig, p.name, ErrExited)
		}
		return fmt.Errorf("harness: signal %v to %s: %w", sig, p.name, err)
	}
	return nil
}

// killGroup sends sig to the group, ignoring a group that is gone.
func (p *Process) killGroup(sig syscall.Signal) {
	if err := p.Signal(sig); err != nil && !errors.Is(err, ErrExited) {
		p.tb.Errorf("%v", err)
	}
}

// Kill sends SIGKILL to the whole process group and waits for the child to
// be reaped. Processes it started were sent SIGKILL too and die at once,
// but Kill does not wait for them. It returns Wait's error.
func (p *Process) Kill() error {
	p.killGroup(syscall.SIGKILL)
	_, err := p.Wait()
	return err
}

// Stop sends SIGTERM to the process group, waits up to timeout for the
// child to exit, then kills the group with SIGKILL, and returns Wait's
// result.
func (p *Process) Stop(timeout time.Duration) (code int, err error) {
	p.killGroup(syscall.SIGTERM)
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
		p.killGroup(syscall.SIGKILL)
	}
	return p.Wait()
}

// WaitReady waits until the readiness conditions of the Options hold: a
// line matching ReadyLine and then a connection accepted on ReadyAddr. It
// returns nil at once when neither is set. Its error, when the process
// exits first (wrapping ErrExited) or ctx ends (wrapping ctx.Err()), holds
// the tail of the process's output.
func (p *Process) WaitReady(ctx context.Context) error {
	if p.ready != nil {
		if _, err := p.waitLine(ctx, p.ready, 0); err != nil {
			return p.failure("not ready: no line matching %q: %w", p.ready, err)
		}
	}
	if p.readyAddr != "" {
		if err := p.waitDial(ctx, p.readyAddr); err != nil {
			return p.failure("not ready: %s: %w", p.readyAddr, err)
		}
	}
	return nil
}

// WaitForLine waits until a line of stdout or stderr, counted from the
// first line the process printed, matches the regular expression pattern,
// and returns that line. Its error, when the process exits first (wrapping
// ErrExited) or ctx ends (wrapping ctx.Err()), holds the output tail.
func (p *Process) WaitForLine(ctx context.Context, pattern string) (string, error) {
	return p.WaitForLineAfter(ctx, 0, pattern)
}

// Mark returns how many complete lines the process has printed on stdout
// and stderr together; pass it to WaitForLineAfter to wait for a line
// printed after this moment.
func (p *Process) Mark() int {
	return p.out.count()
}

// WaitForLineAfter is WaitForLine over the lines after the first mark
// lines (see Mark).
func (p *Process) WaitForLineAfter(ctx context.Context, mark int, pattern string) (string, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return "", fmt.Errorf("harness: WaitForLine: %w", err)
	}
	text, err := p.waitLine(ctx, re, mark)
	if err != nil {
		return "", p.failure("no line matching %q: %w", pattern, err)
	}
	return text, nil
}

// failure formats an error about p with the tail of its output.
func (p *Process) failure(format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	tail := strings.TrimSuffix(p.out.tailReport(p.name, tailLines), "\n")
	return fmt.Errorf("harness: %s (pid %d, %s) %w\n%s", p.name, p.Pid(), p.state(), err, tail)
}

// waitLine waits for a line at index >= from that re matches.
func (p *Process) waitLine(ctx context.Context, re *regexp.Regexp, from int) (string, error) {
	for {
		text, found, next, changed := p.out.match(re, from)
		if found {
			return text, nil
		}
		from = next
		select {
		case <-changed:
		case <-p.done:
			// Output is fully drained once done is closed: look once more.
			if text, found, _, _ := p.out.match(re, from); found {
				return text, nil
			}
			return "", p.exited()
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

// waitDial polls addr until it accepts a TCP connection.
func (p *Process) waitDial(ctx context.Context, addr string) error {
	var d net.Dialer
	tick := time.NewTicker(dialPoll)
	defer tick.Stop()
	for {
		dctx, cancel := context.WithTimeout(ctx, dialTimeout)
		conn, err := d.DialContext(dctx, "tcp", addr)
		cancel()
		if err == nil {
			return conn.Close()
		}
		select {
		case <-tick.C:
		case <-p.done:
			return p.exited()
		case <-ctx.Done():
			return fmt.Errorf("%w (last dial: %v)", ctx.Err(), err)
		}
	}
}

// exited returns the error of a wait that the process's exit ended.
func (p *Process) exited() error {
	return fmt.Errorf("%w with status %d", ErrExited, p.code)
}
