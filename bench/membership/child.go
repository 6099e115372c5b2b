package membership

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	gossip "github.com/weirmq/weir/cluster/membership"
)

// The environment of a re-executed child. childEnv selects the role.
const (
	childEnv   = "WEIR_MEMBERSHIP_CHILD" // "victim" or "load"
	profileEnv = "WEIR_MEMBERSHIP_PROFILE"
	nameEnv    = "WEIR_MEMBERSHIP_NAME"
	joinEnv    = "WEIR_MEMBERSHIP_JOIN"
	loadEnv    = "WEIR_MEMBERSHIP_LOAD"
)

// MaybeRunChild runs the child role this process was re-executed for, and
// exits when its stdin closes (the parent is gone or done); it returns at
// once in a process that is no child. Call it first in main or TestMain.
func MaybeRunChild() {
	role := os.Getenv(childEnv)
	if role == "" {
		return
	}
	var err error
	switch role {
	case "victim":
		err = runVictim()
	case "load":
		err = runLoad(os.Getenv(loadEnv))
	default:
		err = fmt.Errorf("unknown %s %q", childEnv, role)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "membership child:", err)
		os.Exit(2)
	}
	os.Exit(0)
}

// waitStdinEOF blocks until the parent closes our stdin.
func waitStdinEOF() {
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// runVictim joins the cluster named in the environment, says "ready" on
// stdout, and stays a member until killed or until stdin closes.
func runVictim() error {
	p, err := gossip.ProfileByName(os.Getenv(profileEnv))
	if err != nil {
		return err
	}
	ml, err := memberlist.Create(p.Config(os.Getenv(nameEnv), "127.0.0.1", 0, os.Stderr))
	if err != nil {
		return fmt.Errorf("victim memberlist: %w", err)
	}
	if _, err := ml.Join(strings.Split(os.Getenv(joinEnv), ",")); err != nil {
		return fmt.Errorf("victim join: %w", err)
	}
	fmt.Println("ready")
	waitStdinEOF()
	return ml.Shutdown()
}

// runLoad keeps the machine's cores busy until stdin closes: "spin" with
// one busy goroutine per core, "produce" with a franz-go producer writing
// 1 KiB records as fast as an in-process kfake broker takes them (the
// closest thing to a broker under producer load that needs no weir).
func runLoad(mode string) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	switch mode {
	case "spin":
		for range runtime.GOMAXPROCS(0) {
			go func() {
				x := uint64(1)
				for ctx.Err() == nil {
					for range 1 << 16 {
						x = x*6364136223846793005 + 1442695040888963407
					}
				}
				_ = x
			}()
		}
	case "produce":
		c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(4, "load"))
		if err != nil {
			return fmt.Errorf("load kfake: %w", err)
		}
		defer c.Close()
		cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic("load"))
		if err != nil {
			return fmt.Errorf("load client: %w", err)
		}
		defer cl.Close()
		value := make([]byte, 1024)
		for range 2 {
			go func() {
				for ctx.Err() == nil {
					cl.Produce(ctx, &kgo.Record{Value: value}, nil)
				}
			}()
		}
		// Wait for the first acknowledged record so "ready" means loaded.
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: value}).FirstErr(); err != nil {
			return fmt.Errorf("load produce: %w", err)
		}
	default:
		return fmt.Errorf("unknown load %q (spin, produce)", mode)
	}
	fmt.Println("ready")
	waitStdinEOF()
	return nil
}

// waitReady reads the child's stdout until its "ready" line.
func waitReady(r io.Reader, timeout time.Duration) error {
	done := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if sc.Text() == "ready" {
				done <- nil
				// Keep draining so the child never blocks on stdout.
				for sc.Scan() {
				}
				return
			}
		}
		done <- fmt.Errorf("child exited before ready: %v", sc.Err())
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(timeout):
		return fmt.Errorf("child not ready after %s", timeout)
	}
}
