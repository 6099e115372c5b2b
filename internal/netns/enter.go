package netns

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// netnsDir is where ip netns keeps the namespaces it names.
const netnsDir = "/run/netns"

// Do runs fn on the calling goroutine with its OS thread inside h's
// network namespace, then moves the thread back. Sockets fn creates
// (listeners, dialed connections) belong to h's namespace for their whole
// life, wherever they are used afterwards. Goroutines fn starts do not
// run inside the namespace. If the thread cannot be moved back, it is
// left locked, so the runtime retires it when the goroutine ends.
func (h *Host) Do(fn func() error) error {
	runtime.LockOSThread()
	home, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("netns: open this thread's namespace: %w", err)
	}
	defer home.Close()
	target, err := os.Open(filepath.Join(netnsDir, h.Name))
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("netns: host %d: %w", h.Index, err)
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("netns: enter %s: %w", h.Name, err)
	}
	fnErr := fn()
	if err := unix.Setns(int(home.Fd()), unix.CLONE_NEWNET); err != nil {
		// Leave the thread locked: it dies with this goroutine.
		return errors.Join(fnErr, fmt.Errorf("netns: leave %s: %w", h.Name, err))
	}
	runtime.UnlockOSThread()
	return fnErr
}

// Listen opens a listener inside h's namespace (see net.Listen); an
// address without a host ("tcp", ":0") listens on h.Addr.
func (h *Host) Listen(network, port string) (net.Listener, error) {
	var l net.Listener
	err := h.Do(func() error {
		var err error
		l, err = net.Listen(network, h.local(port))
		return err
	})
	return l, err
}

// ListenPacket opens a packet listener (UDP) inside h's namespace, as
// Listen does.
func (h *Host) ListenPacket(network, port string) (net.PacketConn, error) {
	var c net.PacketConn
	err := h.Do(func() error {
		var err error
		c, err = net.ListenPacket(network, h.local(port))
		return err
	})
	return c, err
}

// Dial connects from inside h's namespace to address, within timeout.
func (h *Host) Dial(network, address string, timeout time.Duration) (net.Conn, error) {
	var c net.Conn
	err := h.Do(func() error {
		// The socket is made on this thread before DialContext waits, so
		// the connection belongs to h's namespace.
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		var err error
		c, err = (&net.Dialer{}).DialContext(ctx, network, address)
		return err
	})
	return c, err
}

// local turns ":port" into h.Addr:port; a full address is kept.
func (h *Host) local(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host != "" {
		return addr
	}
	return net.JoinHostPort(h.Addr.String(), port)
}
