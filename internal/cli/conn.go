package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// DefaultBroker is the bootstrap broker when neither --bootstrap-server nor
// WEIR_BROKERS names one: what `weir serve` listens on by default.
const DefaultBroker = "127.0.0.1:9092"

// BrokersEnv is the environment variable that gives the bootstrap brokers
// when --bootstrap-server is not set, so a shell session need not repeat
// them.
const BrokersEnv = "WEIR_BROKERS"

// DefaultTimeout bounds a command's requests when --timeout is not set.
const DefaultTimeout = 30 * time.Second

// Conn is the connection flags every command that talks to a broker has.
type Conn struct {
	fs      *FlagSet
	brokers *string
	timeout *time.Duration
}

// AddConnFlags registers --bootstrap-server (alias --brokers, default
// $WEIR_BROKERS, else DefaultBroker) and --timeout on fs.
func AddConnFlags(fs *FlagSet) *Conn {
	c := AddBrokersFlag(fs)
	c.timeout = fs.Duration("timeout", DefaultTimeout, "give up when the brokers have not answered within this `duration`")
	return c
}

// AddBrokersFlag registers only --bootstrap-server (alias --brokers), for a
// command whose --timeout means something else (`weir perf consume`);
// Timeout is then DefaultTimeout.
func AddBrokersFlag(fs *FlagSet) *Conn {
	def := DefaultBroker
	if env := strings.TrimSpace(os.Getenv(BrokersEnv)); env != "" {
		def = env
	}
	c := &Conn{fs: fs, timeout: new(time.Duration)}
	*c.timeout = DefaultTimeout
	c.brokers = fs.String("bootstrap-server", def, "bootstrap brokers `HOST:PORT[,HOST:PORT...]`; $"+BrokersEnv+" when not given")
	fs.Alias("brokers", "bootstrap-server")
	return c
}

// Seeds returns the bootstrap brokers' addresses.
func (c *Conn) Seeds() ([]string, error) { return ParseBrokers(*c.brokers) }

// Timeout returns --timeout.
func (c *Conn) Timeout() time.Duration { return *c.timeout }

// ParseBrokers splits a broker list, "HOST:PORT[,HOST:PORT...]", into
// addresses.
func ParseBrokers(s string) ([]string, error) {
	var seeds []string
	for _, b := range strings.Split(s, ",") {
		b = strings.TrimSpace(b)
		if b == "" {
			return nil, fmt.Errorf("--bootstrap-server %q has an empty address", s)
		}
		seeds = append(seeds, b)
	}
	return seeds, nil
}

// check validates the flags, reporting a mistake as a usage error.
func (c *Conn) check() ([]string, error) {
	seeds, err := c.Seeds()
	if err == nil && *c.timeout <= 0 {
		err = fmt.Errorf("--timeout %v, need more than 0", *c.timeout)
	}
	if err != nil {
		return nil, c.fs.UsageError(err)
	}
	return seeds, nil
}

// Client returns a Kafka client for the bootstrap brokers, with opts added.
// A mistake in the flags is a usage error.
func (c *Conn) Client(opts ...kgo.Opt) (*kgo.Client, error) {
	seeds, err := c.check()
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(seeds...)}, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("kafka client: %w", err)
	}
	return cl, nil
}

// Admin is an admin client for one command, bounded by --timeout.
type Admin struct {
	*kadm.Client
	// Kgo is the client underneath, for requests kadm does not wrap.
	Kgo     *kgo.Client
	seeds   []string
	timeout time.Duration
	cancel  context.CancelFunc
}

// Admin checks the flags and returns an admin client and the context, ctx
// bounded by --timeout, under which the command makes its requests; the
// caller closes the client, which also ends that context.
func (c *Conn) Admin(ctx context.Context) (*Admin, context.Context, error) {
	cl, err := c.Client()
	if err != nil {
		return nil, nil, err
	}
	seeds, _ := c.Seeds()
	ctx, cancel := context.WithTimeout(ctx, *c.timeout)
	return &Admin{Client: kadm.NewClient(cl), Kgo: cl, seeds: seeds, timeout: *c.timeout, cancel: cancel}, ctx, nil
}

// Close closes the connections and ends the context Admin returned.
func (a *Admin) Close() {
	a.Kgo.Close()
	a.cancel()
}

// Timeout returns the bound on the command's requests.
func (a *Admin) Timeout() time.Duration { return a.timeout }

// Explain wraps the error of the request what, made under ctx, in weir's
// words (see Explain); a timeout names the brokers, the wait and the flags
// that change them.
func (a *Admin) Explain(ctx context.Context, what string, err error) error {
	if timedOut(ctx, err) {
		return fmt.Errorf("%s: no answer from %s within %v (is a broker running there? set --bootstrap-server or %s, or a longer --timeout): %w",
			what, strings.Join(a.seeds, ","), a.timeout, BrokersEnv, err)
	}
	return fmt.Errorf("%s: %w", what, Explain(err))
}
