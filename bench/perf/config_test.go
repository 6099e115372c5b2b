package perf

import (
	"errors"
	"testing"
	"time"
)

func TestParseAcks(t *testing.T) {
	for in, want := range map[string]Acks{"0": AcksNone, "1": AcksLeader, "-1": AcksAll, "all": AcksAll, "ALL": AcksAll} {
		if got, err := ParseAcks(in); err != nil || got != want {
			t.Errorf("ParseAcks(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "2", "-2", "any", "leader"} {
		if _, err := ParseAcks(in); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("ParseAcks(%q) = %v, want ErrInvalidConfig", in, err)
		}
	}
	if AcksAll.String() != "all" || AcksLeader.String() != "1" || AcksNone.String() != "0" {
		t.Error("Acks.String does not print Kafka's spelling")
	}
}

func TestParseCompression(t *testing.T) {
	for _, c := range Compressions {
		if got, err := ParseCompression(string(c)); err != nil || got != c {
			t.Errorf("ParseCompression(%q) = %v, %v", c, got, err)
		}
	}
	if got, _ := ParseCompression("LZ4"); got != CompressionLz4 {
		t.Errorf("ParseCompression is case-sensitive: %q", got)
	}
	for _, in := range []string{"", "brotli", "zip"} {
		if _, err := ParseCompression(in); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("ParseCompression(%q) = %v, want ErrInvalidConfig", in, err)
		}
	}
}

func TestProducerConfigValidate(t *testing.T) {
	valid := DefaultProducerConfig()
	valid.Topic, valid.Records = "t", 1
	if err := valid.Validate(); err != nil {
		t.Fatalf("defaults with a topic and records: %v", err)
	}
	bad := map[string]func(*ProducerConfig){
		"no topic":           func(c *ProducerConfig) { c.Topic = "" },
		"no records":         func(c *ProducerConfig) { c.Records = 0 },
		"no brokers":         func(c *ProducerConfig) { c.Brokers = nil },
		"empty broker":       func(c *ProducerConfig) { c.Brokers = []string{"a:1", " "} },
		"negative size":      func(c *ProducerConfig) { c.RecordSize = -1 },
		"acks 2":             func(c *ProducerConfig) { c.Acks = 2 },
		"zero throughput":    func(c *ProducerConfig) { c.Throughput = 0 },
		"negative linger":    func(c *ProducerConfig) { c.Linger = -time.Millisecond },
		"zero batch":         func(c *ProducerConfig) { c.BatchBytes = 0 },
		"idempotent acks=1":  func(c *ProducerConfig) { c.Acks = AcksLeader },
		"idempotent acks=0":  func(c *ProducerConfig) { c.Acks = AcksNone },
		"unknown codec":      func(c *ProducerConfig) { c.Compression = "brotli" },
		"zero in flight":     func(c *ProducerConfig) { c.MaxInFlight = 0 },
		"negative reporting": func(c *ProducerConfig) { c.ReportInterval = -1 },
	}
	for name, mutate := range bad {
		c := valid
		mutate(&c)
		if err := c.Validate(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: Validate() = %v, want ErrInvalidConfig", name, err)
		}
	}
	ok := valid
	ok.Acks, ok.Idempotent, ok.RecordSize, ok.Throughput = AcksNone, false, 0, 10
	if err := ok.Validate(); err != nil {
		t.Errorf("acks=0, not idempotent, empty records, 10/s: %v", err)
	}
}

func TestConsumerConfigValidate(t *testing.T) {
	valid := DefaultConsumerConfig()
	valid.Topic, valid.Records = "t", 1
	if err := valid.Validate(); err != nil {
		t.Fatalf("defaults with a topic and records: %v", err)
	}
	for name, mutate := range map[string]func(*ConsumerConfig){
		"no topic":     func(c *ConsumerConfig) { c.Topic = "" },
		"no records":   func(c *ConsumerConfig) { c.Records = -1 },
		"no brokers":   func(c *ConsumerConfig) { c.Brokers = nil },
		"zero timeout": func(c *ConsumerConfig) { c.Timeout = 0 },
	} {
		c := valid
		mutate(&c)
		if err := c.Validate(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: Validate() = %v, want ErrInvalidConfig", name, err)
		}
	}
}
