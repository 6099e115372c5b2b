package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Value returns a broker config's effective value as text (the configured
// value, else the default) and whether it was configured. A config with a
// null default that is not configured yields "", false.
func (b *Broker) Value(name string) (string, bool) {
	if s, ok := b.set[name]; ok {
		return s.value, true
	}
	e, ok := LookupBroker(name)
	if !ok {
		return "", false
	}
	return e.Default, false
}

// Origin returns where a configured broker config was set ("FILE:LINE" or
// "override"), or "" when it is at its default.
func (b *Broker) Origin(name string) string { return b.set[name].origin }

// typed returns the parsed effective value of a broker config of type t.
// Asking for a config the table lacks, or with the wrong type, is a
// programming error and panics.
func (b *Broker) typed(name string, types ...Type) value {
	e, ok := LookupBroker(name)
	if !ok || !slices.Contains(types, e.Type) {
		panic(fmt.Sprintf("config: no broker config %s of type %v", name, types))
	}
	s, set := b.Value(name)
	if !set && e.NullDefault {
		return value{}
	}
	v, err := parseValue(e.Type, s)
	if err != nil {
		panic(fmt.Sprintf("config: stored value of %s does not parse: %v", name, err))
	}
	return v
}

// Bool returns a boolean broker config's effective value.
func (b *Broker) Bool(name string) bool { return b.typed(name, TypeBoolean).b }

// Int returns an int, short or long broker config's effective value (0
// when its default is null and it is unset).
func (b *Broker) Int(name string) int64 { return b.typed(name, TypeInt, TypeShort, TypeLong).i }

// Float returns a double broker config's effective value.
func (b *Broker) Float(name string) float64 { return b.typed(name, TypeDouble).f }

// String returns a string or password broker config's effective value
// ("" when its default is null and it is unset).
func (b *Broker) String(name string) string {
	return b.typed(name, TypeString, TypePassword, TypeClass).s
}

// List returns a list broker config's effective elements (none when its
// default is null and it is unset).
func (b *Broker) List(name string) []string { return b.typed(name, TypeList).list }

// NodeID returns node.id.
func (b *Broker) NodeID() int32 { return int32(b.Int("node.id")) }

// LogDirs returns log.dirs split at commas.
func (b *Broker) LogDirs() []string { return splitList(b.String("log.dirs")) }

// Listeners returns listeners split at commas.
func (b *Broker) Listeners() []string { return splitList(b.String("listeners")) }

// AdvertisedListeners returns advertised.listeners split at commas, or
// Listeners when it is unset.
func (b *Broker) AdvertisedListeners() []string {
	if _, ok := b.Value("advertised.listeners"); !ok {
		return b.Listeners()
	}
	return splitList(b.String("advertised.listeners"))
}

// Voters returns controller.quorum.voters; empty means this node alone.
func (b *Broker) Voters() []string { return b.List("controller.quorum.voters") }

// VoterIDs returns the node ids of controller.quorum.voters, ascending,
// or nil when it is empty. Each entry is an id, or Kafka's id@host:port
// (the address is ignored: nodes find each other by gossip). A bad or
// repeated id is an error naming it.
func (b *Broker) VoterIDs() ([]int32, error) {
	var ids []int32
	for _, v := range b.Voters() {
		id, _, _ := strings.Cut(v, "@")
		n, err := strconv.ParseInt(strings.TrimSpace(id), 10, 32)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("controller.quorum.voters: %q is not a node id (want 1,2,3 or 1@host:port,...)", v)
		}
		if slices.Contains(ids, int32(n)) {
			return nil, fmt.Errorf("controller.quorum.voters: node %d is listed twice", n)
		}
		ids = append(ids, int32(n))
	}
	slices.Sort(ids)
	return ids, nil
}

// DefaultReplicationFactor returns default.replication.factor, or
// min(3, voters) when it is unset.
func (b *Broker) DefaultReplicationFactor(voters int) int16 {
	return b.replicationFactor("default.replication.factor", voters)
}

// OffsetsTopicReplicationFactor returns offsets.topic.replication.factor,
// or min(3, voters) when it is unset.
func (b *Broker) OffsetsTopicReplicationFactor(voters int) int16 {
	return b.replicationFactor("offsets.topic.replication.factor", voters)
}

func (b *Broker) replicationFactor(name string, voters int) int16 {
	if _, ok := b.Value(name); ok {
		return int16(b.Int(name))
	}
	return int16(max(1, min(3, voters)))
}

// Millis returns an int or long broker config counted in milliseconds as
// a time.Duration.
func (b *Broker) Millis(name string) time.Duration {
	return time.Duration(b.Int(name)) * time.Millisecond
}
