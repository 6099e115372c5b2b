package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/weirmq/weir/bench/perf"
)

// runSubcommand dispatches `weir <group> <sub> [flags]` to the entry of
// subs named by args[0]; `weir topics` and `weir perf` share it.
func runSubcommand(ctx context.Context, group string, subs []command, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		printSubcommandUsage(stderr, group, subs)
		return &usageError{err: fmt.Errorf("no %s command named", group), reported: true}
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		printSubcommandUsage(stderr, group, subs)
		return flag.ErrHelp
	}
	for _, s := range subs {
		if s.name == args[0] {
			return s.run(ctx, args[1:], stdout, stderr)
		}
	}
	return usageErrorf("unknown %s command %q", group, args[0])
}

// printSubcommandUsage lists the commands of group.
func printSubcommandUsage(w io.Writer, group string, subs []command) {
	fmt.Fprintf(w, "usage: weir %s <command> [flags]\n\ncommands:\n", group)
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	for _, s := range subs {
		fmt.Fprintf(tw, "  %s\t%s\n", s.name, s.summary)
	}
	tw.Flush()
	fmt.Fprintf(w, "\n'weir %s <command> -h' prints a command's flags.\n", group)
}

// subUsageError reports a command-line mistake in the flags of `weir
// <name>` (name holds the group and the command, "topics create"),
// pointing at its flag list, and returns it as a usage error.
func subUsageError(stderr io.Writer, name string, err error) error {
	fmt.Fprintf(stderr, "weir %s: %v\nrun 'weir %s -h' for usage\n", name, err, name)
	return &usageError{err: err, reported: true}
}

// noArgs returns a usage error if fs has positional arguments left.
func noArgs(stderr io.Writer, name string, fs *flag.FlagSet) error {
	if fs.NArg() > 0 {
		return subUsageError(stderr, name, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " ")))
	}
	return nil
}

// brokersFlag registers --brokers on fs.
func brokersFlag(fs *flag.FlagSet) *string {
	return fs.String("brokers", perf.DefaultBroker, "bootstrap brokers, HOST:PORT[,HOST:PORT...]")
}

// parseBrokers splits a --brokers value into addresses.
func parseBrokers(s string) ([]string, error) {
	var seeds []string
	for _, b := range strings.Split(s, ",") {
		b = strings.TrimSpace(b)
		if b == "" {
			return nil, fmt.Errorf("--brokers %q has an empty address", s)
		}
		seeds = append(seeds, b)
	}
	return seeds, nil
}

// adminFlags are the connection flags of the `weir topics` commands.
type adminFlags struct {
	brokers *string
	timeout *time.Duration
}

// addAdminFlags registers --brokers and --timeout on fs.
func addAdminFlags(fs *flag.FlagSet) adminFlags {
	return adminFlags{
		brokers: brokersFlag(fs),
		timeout: fs.Duration("timeout", 30*time.Second, "give up when the brokers have not answered within this long"),
	}
}

// admin is an admin client for one command, bounded by --timeout.
type admin struct {
	*kadm.Client
	kgo     *kgo.Client
	timeout time.Duration
}

// connect checks the connection flags (a mistake is a usage error of
// command name) and returns an admin client and the context bounding the
// command's requests; the caller closes the client and calls cancel.
func (f adminFlags) connect(ctx context.Context, stderr io.Writer, name string) (*admin, context.Context, context.CancelFunc, error) {
	seeds, err := parseBrokers(*f.brokers)
	if err == nil && *f.timeout <= 0 {
		err = fmt.Errorf("--timeout %v, need more than 0", *f.timeout)
	}
	if err != nil {
		return nil, nil, nil, subUsageError(stderr, name, err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("admin client: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, *f.timeout)
	return &admin{Client: kadm.NewClient(cl), kgo: cl, timeout: *f.timeout}, ctx, cancel, nil
}

// Close closes the connections.
func (a *admin) Close() { a.kgo.Close() }

// explain wraps the error of a request made under ctx: a timeout names
// the brokers' silence.
func (a *admin) explain(ctx context.Context, what string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%s: no answer from the brokers within %v: %w", what, a.timeout, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// brokerError is a Kafka error code a broker answered, with the message the
// broker sent along with it.
type brokerError struct {
	code    *kerr.Error
	message string
}

// Error prints Kafka's name of the code and the broker's message, e.g.
// "TOPIC_ALREADY_EXISTS: Topic 'orders' already exists.".
func (e *brokerError) Error() string { return e.code.Message + ": " + e.message }

// Unwrap returns the code's error, so errors.Is(err, kerr.X) holds.
func (e *brokerError) Unwrap() error { return e.code }

// withBrokerMessage returns err, a broker's error code, with the message
// the broker sent; without one, err already reads "NAME: description".
func withBrokerMessage(err error, message string) error {
	var code *kerr.Error
	if message == "" || !errors.As(err, &code) {
		return err
	}
	return &brokerError{code: code, message: message}
}
