package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weirmq/weir/bench/perf"
	"github.com/weirmq/weir/cluster/config"
	"github.com/weirmq/weir/internal/cli"
)

// perfProduceFlags are the flags of `weir perf produce`, bound to a
// configuration.
type perfProduceFlags struct {
	fs          *cli.FlagSet
	conn        *cli.Conn
	acks        *string
	compression *string
	batchBytes  *int
	props       *propertyList
	propsFile   *string
}

// newPerfProduceFlags registers the flags of `weir perf produce` with cfg's
// values as their defaults.
func newPerfProduceFlags(cfg *perf.ProducerConfig, stderr io.Writer) *perfProduceFlags {
	fs := cli.NewFlagSet("perf produce", "--topic T --records N [flags]", stderr)
	f := &perfProduceFlags{fs: fs, conn: cli.AddConnFlags(fs), props: &propertyList{}}
	fs.StringVar(&cfg.Topic, "topic", "", "topic to produce to (required); created if missing and the broker auto-creates topics")
	fs.Int64Var(&cfg.Records, "records", 0, "number of records to send (required)")
	fs.Alias("num-records", "records")
	fs.IntVar(&cfg.RecordSize, "record-size", cfg.RecordSize, "bytes of each record's value (random letters; records have no key)")
	f.acks = fs.String("acks", cfg.Acks.String(), "acknowledgements to wait for: 0, 1, -1 or all")
	fs.Float64Var(&cfg.Throughput, "throughput", cfg.Throughput, "cap on records per second; -1: no cap")
	fs.Var(millisFlag{&cfg.Linger}, "linger", "how long a batch waits for more records: a `duration` (5ms) or milliseconds (5)")
	f.batchBytes = fs.Int("batch-bytes", int(cfg.BatchBytes), "largest record batch in bytes")
	f.compression = fs.String("compression", string(cfg.Compression), "batch codec: none, gzip, snappy, lz4 or zstd")
	fs.BoolVar(&cfg.Idempotent, "idempotent", cfg.Idempotent, "idempotent producer; by default on exactly when --acks is all, as the Java client")
	fs.IntVar(&cfg.MaxInFlight, "max-in-flight", cfg.MaxInFlight, "produce requests in flight per broker when not idempotent")
	fs.Var(millisFlag{&cfg.ReportInterval}, "reporting-interval", "how often to print a progress line: a `duration` (5s) or milliseconds; 0: never")
	fs.Var(f.props, "producer-props", "a Java producer config `NAME=VALUE` (acks, linger.ms, batch.size, compression.type, enable.idempotence, "+
		"max.in.flight.requests.per.connection, bootstrap.servers); repeat the flag or list several after it, as Kafka's tool; weir's own flags win")
	f.propsFile = fs.String("producer.config", "", "a Java producer properties `FILE`, read before --producer-props")
	return f
}

// parsePerfProduceFlags reads the flags of `weir perf produce` into a
// checked configuration: Kafka's producer properties (--producer.config,
// then --producer-props) over the defaults, and weir's own flags over
// those. The command line is parsed twice: once for the properties, and
// once more with the properties as the defaults, so that a flag given
// explicitly wins.
func parsePerfProduceFlags(args []string, stderr io.Writer) (perf.ProducerConfig, error) {
	cfg := perf.DefaultProducerConfig()
	first := perf.DefaultProducerConfig()
	first.Idempotent = false // for the usage: its default follows --acks, as the flag's text says
	pre := newPerfProduceFlags(&first, stderr)
	if err := pre.fs.Parse(args); err != nil {
		return cfg, err
	}
	props, err := pre.properties()
	if err != nil {
		return cfg, pre.fs.UsageError(err)
	}
	applied, err := applyProducerProperties(&cfg, props, stderr)
	if err != nil {
		return cfg, pre.fs.UsageError(err)
	}

	f := newPerfProduceFlags(&cfg, stderr)
	if err := f.fs.Parse(args); err != nil {
		return cfg, err
	}
	if err := f.check(&cfg, applied); err != nil {
		return cfg, f.fs.UsageError(err)
	}
	return cfg, nil
}

// properties returns the producer properties of the command line: the
// file's, then those of --producer-props and of the NAME=VALUE arguments
// that follow it (Kafka's multi-value form: --producer-props acks=all
// linger.ms=5). Any other positional argument is a mistake.
func (f *perfProduceFlags) properties() ([]config.Property, error) {
	var props []config.Property
	if *f.propsFile != "" {
		p, err := config.ReadPropertiesFile(*f.propsFile)
		if err != nil {
			return nil, fmt.Errorf("--producer.config: %w", err)
		}
		props = p
	}
	extra, err := f.extraProperties()
	if err != nil {
		return nil, err
	}
	for _, kv := range append(slices.Clone(f.props.values), extra...) {
		name, value, _ := strings.Cut(kv, "=")
		props = append(props, config.Property{Key: name, Value: value})
	}
	return props, nil
}

// extraProperties returns the positional arguments, which must be the
// NAME=VALUE values of Kafka's `--producer-props a=1 b=2` form.
func (f *perfProduceFlags) extraProperties() ([]string, error) {
	args := f.fs.Args()
	if len(args) == 0 {
		return nil, nil
	}
	if !f.fs.Changed("producer-props") {
		return nil, fmt.Errorf("unexpected arguments: %s", strings.Join(args, " "))
	}
	for _, a := range args {
		if err := checkProperty(a); err != nil {
			return nil, fmt.Errorf("unexpected argument %q: not a NAME=VALUE producer property", a)
		}
	}
	return args, nil
}

// appliedProperties says which settings the producer properties made, so
// that defaults derived from other settings leave them alone.
type appliedProperties struct {
	brokers, idempotence bool
}

// applyProducerProperties applies props to cfg in order (a later one wins)
// and warns on stderr about the names weir does not use, as the Java client
// warns about unknown configs.
func applyProducerProperties(cfg *perf.ProducerConfig, props []config.Property, stderr io.Writer) (appliedProperties, error) {
	var a appliedProperties
	var unused []string
	for _, p := range props {
		used, err := cfg.SetProperty(p.Key, p.Value)
		if err != nil {
			return a, fmt.Errorf("producer property %w", err)
		}
		switch {
		case !used:
			if !slices.Contains(unused, p.Key) {
				unused = append(unused, p.Key)
			}
		case p.Key == "bootstrap.servers":
			a.brokers = true
		case p.Key == "enable.idempotence":
			a.idempotence = true
		}
	}
	if len(unused) > 0 {
		fmt.Fprintf(stderr, "weir perf produce: ignoring producer properties weir does not use: %s\n", strings.Join(unused, ", "))
	}
	return a, nil
}

// check completes and validates cfg after the second parse.
func (f *perfProduceFlags) check(cfg *perf.ProducerConfig, applied appliedProperties) error {
	if err := perfRequired(f.fs); err != nil {
		return err
	}
	if !applied.brokers || f.fs.Changed("bootstrap-server") {
		seeds, err := f.conn.Seeds()
		if err != nil {
			return err
		}
		cfg.Brokers = seeds
	}
	if cfg.TopicTimeout = f.conn.Timeout(); cfg.TopicTimeout <= 0 {
		return fmt.Errorf("--timeout %v, need more than 0", cfg.TopicTimeout)
	}
	acks, err := perf.ParseAcks(*f.acks)
	if err != nil {
		return err
	}
	cfg.Acks = acks
	if cfg.Compression, err = perf.ParseCompression(*f.compression); err != nil {
		return err
	}
	if *f.batchBytes < 1 || *f.batchBytes > 1<<30 {
		return fmt.Errorf("--batch-bytes %d, want 1 to %d", *f.batchBytes, 1<<30)
	}
	cfg.BatchBytes = int32(*f.batchBytes)
	if !f.fs.Changed("idempotent") && (!applied.idempotence || f.fs.Changed("acks")) {
		cfg.Idempotent = cfg.Acks == perf.AcksAll
	}
	return cfg.Validate()
}

// parsePerfConsumeFlags reads the flags of `weir perf consume` into a
// checked configuration, and whether to leave out the header line.
func parsePerfConsumeFlags(args []string, stderr io.Writer) (perf.ConsumerConfig, bool, error) {
	cfg := perf.DefaultConsumerConfig()
	fs := cli.NewFlagSet("perf consume", "--topic T --records N [flags]", stderr)
	conn := cli.AddBrokersFlag(fs)
	fs.StringVar(&cfg.Topic, "topic", "", "topic to consume (required; it must exist)")
	fs.Int64Var(&cfg.Records, "records", 0, "number of records to consume (required)")
	fs.Alias("messages", "records")
	fs.Var(millisFlag{&cfg.Timeout}, "timeout", "longest wait for the next records: a `duration` (10s) or milliseconds (10000)")
	fs.StringVar(&cfg.Group, "group", "", "consume as a member of this consumer group; default: every partition directly from its start")
	fs.BoolVar(&cfg.FromLatest, "from-latest", false, "start partitions without a committed offset at their end: count only records produced from now on")
	fs.Var(millisFlag{&cfg.ReportInterval}, "reporting-interval", "how often to print a progress line while records come: a `duration` (5s) or milliseconds; 0: never")
	hideHeader := fs.Bool("hide-header", false, "print the summary line without the header line")
	if err := fs.ParseNoArgs(args); err != nil {
		return cfg, false, err
	}
	err := perfRequired(fs)
	if err == nil {
		cfg.Brokers, err = conn.Seeds()
	}
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		return cfg, false, fs.UsageError(err)
	}
	return cfg, *hideHeader, nil
}

// perfRequired checks the flags both commands require.
func perfRequired(fs *cli.FlagSet) error {
	switch {
	case !fs.Changed("topic"):
		return errors.New("--topic is required")
	case !fs.Changed("records"):
		return errors.New("--records is required")
	}
	return nil
}

// propertyList is a flag holding NAME=VALUE properties, one per use.
type propertyList struct{ values []string }

// String joins the properties with spaces.
func (p *propertyList) String() string {
	if p == nil {
		return ""
	}
	return strings.Join(p.values, " ")
}

// Set adds one property.
func (p *propertyList) Set(s string) error {
	if err := checkProperty(s); err != nil {
		return err
	}
	p.values = append(p.values, s)
	return nil
}

// checkProperty checks that s reads NAME=VALUE with a name.
func checkProperty(s string) error {
	if name, _, ok := strings.Cut(s, "="); !ok || strings.TrimSpace(name) == "" {
		return fmt.Errorf("%q is not NAME=VALUE", s)
	}
	return nil
}

// millisFlag is a duration flag that also takes a bare number of
// milliseconds, as Kafka's tools spell linger.ms and --timeout: "5" is
// 5ms, "1.5s" is 1.5 seconds.
type millisFlag struct{ d *time.Duration }

// String returns the duration in Go's notation.
func (f millisFlag) String() string {
	if f.d == nil {
		return ""
	}
	return f.d.String()
}

// Set reads a duration or a whole number of milliseconds; negative values
// are refused.
func (f millisFlag) Set(s string) error {
	var d time.Duration
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		d = time.Duration(ms) * time.Millisecond
	} else if d, err = time.ParseDuration(s); err != nil {
		return fmt.Errorf("%q is neither a duration nor milliseconds", s)
	}
	if d < 0 {
		return fmt.Errorf("%q is negative", s)
	}
	*f.d = d
	return nil
}
