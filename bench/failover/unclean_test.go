package failover

import (
	"errors"
	"strings"
	"testing"
)

// TestValidateUnclean: the unclean fault's needs are checked before any
// node starts.
func TestValidateUnclean(t *testing.T) {
	ok := DefaultConfig()
	ok.WeirPath, ok.Faults, ok.Unclean, ok.Nodes, ok.Partitions = "weir", []Fault{FaultUnclean}, true, 5, 1
	if err := ok.Validate(); err != nil {
		t.Fatalf("5 nodes, 1 partition, --unclean: %v", err)
	}
	rf2 := ok
	rf2.Nodes, rf2.RF = 3, 2
	if err := rf2.Validate(); err != nil {
		t.Errorf("3 nodes, replication factor 2: %v", err)
	}
	for _, c := range []struct {
		change func(*Config)
		want   string
	}{
		{func(c *Config) { c.Unclean = false }, "--unclean"},
		{func(c *Config) { c.Partitions = 3 }, "one partition"},
		{func(c *Config) { c.Topics = 2 }, "one partition"},
		{func(c *Config) { c.Nodes = 4 }, "more than 4 nodes"},
		{func(c *Config) { c.RF, c.MinInsync = 1, 1 }, "at least 2"},
		{func(c *Config) { c.Acks = AcksNone }, "acks"},
		{func(c *Config) { c.Records = 2 }, "3 records"},
	} {
		cfg := ok
		c.change(&cfg)
		err := cfg.Validate()
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate() = %v, want an invalid config naming %q", err, c.want)
		}
	}
}
