package config

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/weirmq/weir/internal/kafkaerr"
)

// ErrInvalidConfig reports an unknown config name or a value its entry
// rejects: Kafka's INVALID_CONFIG (code 40; internal/kafkaerr).
var ErrInvalidConfig = kafkaerr.New(kafkaerr.InvalidConfig, "config: invalid config")

// Type is a config's type, numbered as DescribeConfigs v3+ reports it.
type Type int8

// The config types Kafka defines.
const (
	TypeBoolean  Type = 1
	TypeString   Type = 2
	TypeInt      Type = 3
	TypeShort    Type = 4
	TypeLong     Type = 5
	TypeDouble   Type = 6
	TypeList     Type = 7
	TypeClass    Type = 8
	TypePassword Type = 9
)

// String returns the type's name as Kafka's docs spell it.
func (t Type) String() string {
	switch t {
	case TypeBoolean:
		return "boolean"
	case TypeString:
		return "string"
	case TypeInt:
		return "int"
	case TypeShort:
		return "short"
	case TypeLong:
		return "long"
	case TypeDouble:
		return "double"
	case TypeList:
		return "list"
	case TypeClass:
		return "class"
	case TypePassword:
		return "password"
	}
	return "unknown"
}

// Scope says where a config applies.
type Scope int8

// The scopes of a config.
const (
	// ScopeTopic is a topic config, overridable per topic.
	ScopeTopic Scope = iota
	// ScopeBroker is a broker config, set in server.properties or by a flag.
	ScopeBroker
)

// Synonym is a broker config that supplies a topic config's value when the
// topic has no override.
type Synonym struct {
	// Name is the broker config's name.
	Name string
	// Scale multiplies the broker value into the topic config's unit (for
	// example 3600000 for log.retention.hours to retention.ms); 1 for the
	// same unit. A negative scaled value becomes -1 (unlimited).
	Scale int64
}

// Validator is the check an entry puts on a parsed value.
type Validator struct {
	// Min and Max are inclusive bounds written in the entry's type; ""
	// means unbounded. Only numeric types use them.
	Min, Max string
	// OneOf lists the allowed values (for a list, of each element); empty
	// allows any value.
	OneOf []string
}

// Entry is one row of the config table.
type Entry struct {
	// Name is Kafka's exact spelling of the config.
	Name string
	// Scope is ScopeTopic or ScopeBroker.
	Scope Scope
	// Type is the value's type.
	Type Type
	// Default is the default value as text; meaningless if NullDefault.
	Default string
	// NullDefault is true when the config has no default (Kafka's null):
	// unset unless configured.
	NullDefault bool
	// Valid is the check every value must pass.
	Valid Validator
	// ReadOnly is true when the config cannot be altered at run time. Topic
	// configs are dynamic; weir serves no dynamic broker configs yet, so
	// every broker config is read-only.
	ReadOnly bool
	// Sensitive is true when the value must never be returned (passwords).
	Sensitive bool
	// Synonyms lists a topic config's broker synonyms in Kafka's order of
	// precedence (first wins). Empty for broker configs.
	Synonyms []Synonym
	// Doc is the documentation string, as docs/configs.md shows it.
	Doc string
	// Departs is weir's reason for departing from Kafka's default, naming
	// Kafka's default; empty when the default is Kafka's.
	Departs string
	// Flag is the `weir serve` flag (without its dashes) that sets this
	// broker config over the server.properties file; empty for none.
	Flag string
}

// null marks a default as Kafka's null in the table literals below.
const null = "\x00null"

const (
	maxInt64 = "9223372036854775807"
	maxInt32 = "2147483647"
	msPerMin = 60 * 1000
	msPerHr  = 60 * msPerMin
)

func topic(name string, t Type, def string, v Validator, doc string, syn ...Synonym) Entry {
	return Entry{Name: name, Scope: ScopeTopic, Type: t, Default: def, Valid: v, Doc: doc, Synonyms: syn}
}

func broker(name string, t Type, def string, v Validator, doc string) Entry {
	e := Entry{Name: name, Scope: ScopeBroker, Type: t, Default: def, Valid: v, ReadOnly: true, Doc: doc}
	if def == null {
		e.Default, e.NullDefault = "", true
	}
	if t == TypePassword {
		e.Sensitive = true
	}
	return e
}

func departs(e Entry, why string) Entry {
	e.Departs = why
	return e
}

// withFlag names the `weir serve` flag that overrides e.
func withFlag(e Entry, flag string) Entry {
	e.Flag = flag
	return e
}

func same(name string) Synonym { return Synonym{Name: name, Scale: 1} }

func atLeast(min string) Validator { return Validator{Min: min} }

func between(min, max string) Validator { return Validator{Min: min, Max: max} }

func oneOf(v ...string) Validator { return Validator{OneOf: v} }

var compressionTypes = []string{"uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"}

// topicTable is every topic config weir serves, sorted by name.
var topicTable = []Entry{
	topic("cleanup.policy", TypeList, "delete", oneOf("compact", "delete"),
		"What happens to old segments: delete drops them by retention.ms/retention.bytes, compact keeps the latest record per key; both may be given.",
		same("log.cleanup.policy")),
	topic("compression.type", TypeString, "producer", oneOf(compressionTypes...),
		"The compression of stored batches; producer keeps the codec the producer chose.",
		same("compression.type")),
	topic("delete.retention.ms", TypeLong, "86400000", atLeast("0"),
		"How long a tombstone survives on a compacted topic after its first cleaning (ms).",
		same("log.cleaner.delete.retention.ms")),
	topic("flush.messages", TypeLong, maxInt64, atLeast("1"),
		"Fsync after this many unflushed messages. 1 selects weir's group-commit fsync policy: an acknowledgement also means on disk.",
		same("log.flush.interval.messages")),
	topic("flush.ms", TypeLong, maxInt64, atLeast("0"),
		"Fsync data older than this (ms).",
		same("log.flush.interval.ms"), same("log.flush.scheduler.interval.ms")),
	topic("index.interval.bytes", TypeInt, "4096", atLeast("0"),
		"Bytes appended between two offset index entries.",
		same("log.index.interval.bytes")),
	topic("max.message.bytes", TypeInt, "1048588", atLeast("0"),
		"The largest record batch the topic accepts (bytes, after compression).",
		same("message.max.bytes")),
	topic("message.timestamp.after.max.ms", TypeLong, "3600000", atLeast("0"),
		"With CreateTime, how far past the broker's clock a batch's timestamps may be; later ones get INVALID_TIMESTAMP (ms).",
		same("log.message.timestamp.after.max.ms")),
	topic("message.timestamp.before.max.ms", TypeLong, maxInt64, atLeast("0"),
		"With CreateTime, how far before the broker's clock a batch's timestamps may be; earlier ones get INVALID_TIMESTAMP (ms).",
		same("log.message.timestamp.before.max.ms")),
	topic("message.timestamp.type", TypeString, "CreateTime", oneOf("CreateTime", "LogAppendTime"),
		"Whether a record's timestamp is the producer's (CreateTime) or the broker's append time (LogAppendTime).",
		same("log.message.timestamp.type")),
	topic("min.cleanable.dirty.ratio", TypeDouble, "0.5", between("0", "1"),
		"The share of a compacted log that must be uncleaned before the cleaner runs.",
		same("log.cleaner.min.cleanable.ratio")),
	topic("min.compaction.lag.ms", TypeLong, "0", atLeast("0"),
		"Records younger than this are never compacted (ms).",
		same("log.cleaner.min.compaction.lag.ms")),
	topic("min.insync.replicas", TypeInt, "1", atLeast("1"),
		"With acks=all, the fewest in-sync replicas that must hold a write. weir sets 2 on topics created with replication factor 3 or more.",
		same("min.insync.replicas")),
	topic("retention.bytes", TypeLong, "-1", Validator{},
		"The oldest segments are deleted while a partition is larger than this (bytes); -1 is unlimited.",
		same("log.retention.bytes")),
	topic("retention.ms", TypeLong, "604800000", atLeast("-1"),
		"Segments whose newest record is older than this are deleted (ms); -1 keeps forever.",
		same("log.retention.ms"), Synonym{"log.retention.minutes", msPerMin}, Synonym{"log.retention.hours", msPerHr}),
	topic("segment.bytes", TypeInt, "1073741824", atLeast("14"),
		"A segment rolls before it would grow past this size (bytes).",
		same("log.segment.bytes")),
	topic("segment.index.bytes", TypeInt, "10485760", atLeast("4"),
		"The preallocated size of each offset and time index (bytes); a full index rolls the segment. weir needs at least 32.",
		same("log.index.size.max.bytes")),
	topic("segment.ms", TypeLong, "604800000", atLeast("1"),
		"A segment rolls once its first record is this old (ms).",
		same("log.roll.ms"), Synonym{"log.roll.hours", msPerHr}),
	topic("unclean.leader.election.enable", TypeBoolean, "false", Validator{},
		"Let an out-of-sync replica become leader when no in-sync replica is left, at the cost of losing acknowledged records.",
		same("unclean.leader.election.enable")),
}

// brokerTable is every broker config weir serves, sorted by name.
var brokerTable = []Entry{
	withFlag(broker("advertised.listeners", TypeString, null, Validator{},
		"The listeners clients are told to connect to (Metadata), as comma-separated NAME://host:port; unset means listeners. A wildcard host (0.0.0.0, ::) or port 0 is replaced by the address bound, and a wildcard bind advertises 127.0.0.1."),
		"advertise"),
	broker("auto.create.topics.enable", TypeBoolean, "true", Validator{},
		"Create a topic when a client asks for its metadata or produces to it."),
	broker("auto.leader.rebalance.enable", TypeBoolean, "true", Validator{},
		"Move leaderships back to their preferred replicas (the first of each assignment) once a broker's imbalance passes leader.imbalance.per.broker.percentage; each move hands over without losing acks=1 records."),
	departs(broker("broker.heartbeat.interval.ms", TypeInt, "250", atLeast("1"),
		"How often a broker heartbeats the controller (ms)."),
		"Kafka: 2000; weir detects a dead broker within a second"),
	withFlag(broker("broker.rack", TypeString, null, Validator{},
		"The rack this broker is in, as Metadata and DescribeCluster report it to clients and replica placement spreads replicas over; unset means none."),
		"rack"),
	departs(broker("broker.session.timeout.ms", TypeInt, "1500", atLeast("1"),
		"A broker with no heartbeat for this long is fenced, and a leader stops acknowledging writes once its lease is this old (ms)."),
		"Kafka: 9000; weir fails over in well under a second"),
	broker("compression.type", TypeString, "producer", oneOf(compressionTypes...),
		"Default for the topic config compression.type."),
	broker("connections.max.idle.ms", TypeLong, "600000", Validator{},
		"Idle client connections are closed after this long (ms)."),
	broker("controller.listener.names", TypeList, "", Validator{},
		"Names of the listeners KRaft controllers use; weir's quorum needs none, so these entries of listeners and advertised.listeners are skipped."),
	withFlag(broker("controller.quorum.voters", TypeList, "", Validator{},
		"The node ids of the metadata quorum's voters, as 1,2,3 (Kafka's 1@host:port,... is accepted; the addresses are ignored: nodes find each other by gossip). Empty makes this node its own single voter. Every node of a cluster lists the same voters; a node not listed is a learner: it never votes or campaigns, applies the metadata log once the controller has added it (when gossip shows it), and is a broker like any other. The voters never change at run time."),
		"voters"),
	departs(broker("default.replication.factor", TypeInt, null, atLeast("1"),
		"The replication factor of auto-created topics and of CreateTopics with -1; unset means min(3, number of voters)."),
		"Kafka: 1; weir replicates by default"),
	broker("delete.topic.enable", TypeBoolean, "true", Validator{},
		"Allow DeleteTopics; when false, deletions are refused with TOPIC_DELETION_DISABLED."),
	broker("fetch.max.bytes", TypeInt, "57671680", atLeast("1024"),
		"The most record bytes one Fetch response carries, whatever the request asks (bytes); the first batch is sent whole even if larger (KIP-74)."),
	withFlag(broker("gossip.join", TypeList, "", Validator{},
		"Gossip host:port addresses of nodes to join (memberlist). The list may name this node itself and nodes not up yet: the node keeps trying, so every node can start with the same list."),
		"join"),
	withFlag(broker("gossip.listener", TypeString, null, Validator{},
		"The host:port this node gossips on (memberlist, UDP and TCP). Unset runs a single node without gossip; set, the node joins a cluster (gossip.join, controller.quorum.voters)."),
		"gossip-addr"),
	withFlag(broker("gossip.profile", TypeString, "fast", oneOf("fast", "relaxed", "lan"),
		"How quickly gossip declares a silent node dead: fast (about 0.5 s on a LAN), relaxed (about 2 s, for loaded test machines) or lan (memberlist's defaults, about 5 s). The raft election timeout follows the same profile."),
		"gossip-profile"),
	broker("group.initial.rebalance.delay.ms", TypeInt, "3000", atLeast("0"),
		"How long the group coordinator waits for more members before the first rebalance of an empty group (ms)."),
	broker("group.max.session.timeout.ms", TypeInt, "1800000", atLeast("0"),
		"The largest session.timeout.ms a consumer group member may ask for (ms); larger gets INVALID_SESSION_TIMEOUT."),
	broker("group.max.size", TypeInt, maxInt32, atLeast("1"),
		"The most members a consumer group admits; more get GROUP_MAX_SIZE_REACHED."),
	broker("group.min.session.timeout.ms", TypeInt, "6000", atLeast("0"),
		"The smallest session.timeout.ms a consumer group member may ask for (ms); smaller gets INVALID_SESSION_TIMEOUT."),
	broker("inter.broker.listener.name", TypeString, null, Validator{},
		"The listener brokers use between themselves; weir's nodes talk over protoactor remote, so it is accepted and unused."),
	departs(broker("leader.imbalance.check.interval.seconds", TypeLong, "10", atLeast("1"),
		"How often each leader checks whether leaderships should go back to their preferred replicas (s)."),
		"Kafka: 300; weir balances leaders again soon after a failed broker returns"),
	broker("leader.imbalance.per.broker.percentage", TypeInt, "10", between("0", "100"),
		"The share of a broker's preferred partitions led elsewhere above which they are moved back to it (%)."),
	broker("listener.security.protocol.map", TypeString, "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL", Validator{},
		"Each listener name's security protocol, as NAME:PROTOCOL pairs; weir serves PLAINTEXT listeners only."),
	withFlag(broker("listeners", TypeString, "PLAINTEXT://127.0.0.1:9092", Validator{},
		"The Kafka listeners to bind, as comma-separated NAME://host:port; weir serves exactly one (controller listeners aside)."),
		"listen"),
	broker("log.cleaner.backoff.ms", TypeLong, "15000", atLeast("0"),
		"How long the cleaner sleeps when no log needs cleaning (ms)."),
	broker("log.cleaner.dedupe.buffer.size", TypeLong, "134217728", Validator{},
		"Memory for the cleaner's key map (bytes)."),
	broker("log.cleaner.delete.retention.ms", TypeLong, "86400000", atLeast("0"),
		"Default for the topic config delete.retention.ms."),
	broker("log.cleaner.enable", TypeBoolean, "true", Validator{},
		"Run the log cleaner, which compacts topics with cleanup.policy compact."),
	broker("log.cleaner.min.cleanable.ratio", TypeDouble, "0.5", between("0", "1"),
		"Default for the topic config min.cleanable.dirty.ratio."),
	broker("log.cleaner.min.compaction.lag.ms", TypeLong, "0", atLeast("0"),
		"Default for the topic config min.compaction.lag.ms."),
	broker("log.cleanup.policy", TypeList, "delete", oneOf("compact", "delete"),
		"Default for the topic config cleanup.policy."),
	withFlag(departs(broker("log.dirs", TypeString, "./weir-data", Validator{},
		"The directories holding partition logs, comma-separated."),
		"Kafka: unset, falling back to log.dir=/tmp/kafka-logs"),
		"data"),
	broker("log.flush.interval.messages", TypeLong, maxInt64, atLeast("1"),
		"Default for the topic config flush.messages."),
	broker("log.flush.interval.ms", TypeLong, null, Validator{},
		"Default for the topic config flush.ms; unset means log.flush.scheduler.interval.ms."),
	broker("log.flush.offset.checkpoint.interval.ms", TypeInt, "60000", atLeast("0"),
		"How often the recovery point checkpoint is written (ms)."),
	broker("log.flush.scheduler.interval.ms", TypeLong, maxInt64, Validator{},
		"How often the flusher checks whether a log needs an fsync (ms)."),
	broker("log.index.interval.bytes", TypeInt, "4096", atLeast("0"),
		"Default for the topic config index.interval.bytes."),
	broker("log.index.size.max.bytes", TypeInt, "10485760", atLeast("4"),
		"Default for the topic config segment.index.bytes."),
	broker("log.message.timestamp.after.max.ms", TypeLong, "3600000", atLeast("0"),
		"Default for the topic config message.timestamp.after.max.ms."),
	broker("log.message.timestamp.before.max.ms", TypeLong, maxInt64, atLeast("0"),
		"Default for the topic config message.timestamp.before.max.ms."),
	broker("log.message.timestamp.type", TypeString, "CreateTime", oneOf("CreateTime", "LogAppendTime"),
		"Default for the topic config message.timestamp.type."),
	broker("log.retention.bytes", TypeLong, "-1", Validator{},
		"Default for the topic config retention.bytes."),
	broker("log.retention.check.interval.ms", TypeLong, "300000", atLeast("1"),
		"How often retention is enforced (ms)."),
	broker("log.retention.hours", TypeInt, "168", Validator{},
		"Default for the topic config retention.ms, in hours; log.retention.minutes and log.retention.ms take precedence."),
	broker("log.retention.minutes", TypeInt, null, Validator{},
		"Default for the topic config retention.ms, in minutes; log.retention.ms takes precedence."),
	broker("log.retention.ms", TypeLong, null, Validator{},
		"Default for the topic config retention.ms (ms); -1 keeps forever."),
	broker("log.roll.hours", TypeInt, "168", atLeast("1"),
		"Default for the topic config segment.ms, in hours; log.roll.ms takes precedence."),
	broker("log.roll.ms", TypeLong, null, Validator{},
		"Default for the topic config segment.ms (ms)."),
	broker("log.segment.bytes", TypeInt, "1073741824", atLeast("14"),
		"Default for the topic config segment.bytes."),
	departs(broker("max.connections", TypeInt, null, atLeast("0"),
		"The most client connections open at once; one more is closed at once. Unset means derived from the process's open-file limit (RLIMIT_NOFILE): what is left after 256 descriptors (a quarter of a small limit) kept for the broker's own files and a segment-file cache of half the rest, at most 4096 (384 connections at a limit of 1024, 61184 at 65536). A configured value shrinks the segment-file cache instead, to no fewer than 32."),
		"Kafka: 2147483647, and it stops accepting at the limit; weir keeps clients from starving its own files and refuses at once"),
	broker("max.connections.per.ip", TypeInt, maxInt32, atLeast("0"),
		"The most connections open at once from one client address; one more is closed at once. 0 only with max.connections.per.ip.overrides."),
	broker("max.connections.per.ip.overrides", TypeString, "", Validator{},
		"Per-address limits replacing max.connections.per.ip, as comma-separated host:count pairs (for example hostName:100,127.0.0.1:200); host names are resolved at start-up."),
	broker("max.incremental.fetch.session.cache.slots", TypeInt, "1000", atLeast("0"),
		"The most incremental fetch sessions (KIP-227) the node keeps; 0 disables them."),
	broker("message.max.bytes", TypeInt, "1048588", atLeast("0"),
		"Default for the topic config max.message.bytes: the largest record batch accepted (bytes)."),
	broker("min.incremental.fetch.session.eviction.ms", TypeInt, "120000", atLeast("0"),
		"A fetch session idle longer than this may be evicted for a new one; a younger one only by a more valuable newcomer (ms)."),
	broker("min.insync.replicas", TypeInt, "1", atLeast("1"),
		"Default for the topic config min.insync.replicas."),
	withFlag(departs(broker("node.id", TypeInt, "1", atLeast("0"),
		"This node's id, unique in the cluster."),
		"Kafka: required; weir runs as node 1 with no flags"),
		"node-id"),
	broker("num.partitions", TypeInt, "1", atLeast("1"),
		"The partition count of auto-created topics and of CreateTopics with -1."),
	broker("offset.metadata.max.bytes", TypeInt, "4096", atLeast("0"),
		"The longest metadata string an offset commit may carry; longer gets OFFSET_METADATA_TOO_LARGE."),
	broker("offsets.commit.timeout.ms", TypeInt, "5000", atLeast("1"),
		"How long the group coordinator waits for a write to __consumer_offsets to be acknowledged by its replicas (ms)."),
	broker("offsets.retention.check.interval.ms", TypeLong, "600000", atLeast("1"),
		"How often the group coordinator looks for expired committed offsets (ms)."),
	broker("offsets.retention.minutes", TypeInt, "10080", atLeast("1"),
		"Committed offsets of an empty group are kept this long (minutes)."),
	broker("offsets.topic.num.partitions", TypeInt, "50", atLeast("1"),
		"The partition count of __consumer_offsets."),
	departs(broker("offsets.topic.replication.factor", TypeShort, null, atLeast("1"),
		"The replication factor of __consumer_offsets; unset means min(3, number of voters)."),
		"Kafka: 3, which a cluster of fewer brokers cannot create"),
	broker("producer.id.expiration.ms", TypeInt, "86400000", atLeast("1"),
		"A producer id's state is dropped after this long without a write (ms)."),
	departs(broker("queued.max.request.bytes", TypeLong, "268435456", Validator{},
		"The most bytes of request frames held at once, from a frame's size until its request is done; a connection whose next frame does not fit stops reading until it does, and an eighth is kept for frames of at most a quarter of that. -1 is unbounded. When positive it must be at least socket.request.max.bytes; unset, it is raised to socket.request.max.bytes if that is larger."),
		"Kafka: -1 (unbounded); weir bounds the memory of requests in flight"),
	withFlag(broker("remote.listener", TypeString, null, Validator{},
		"The host:port of this node's actor remote (control messages between nodes: raft, controller requests, heartbeats). Unset uses the gossip host with a free port, which the node gossips to the others."),
		"remote-addr"),
	broker("replica.fetch.backoff.ms", TypeInt, "1000", atLeast("0"),
		"How long a replica fetcher waits after a failed fetch before it tries the same leader again (ms)."),
	broker("replica.fetch.max.bytes", TypeInt, "1048576", atLeast("0"),
		"The record bytes a follower asks for per partition in one fetch; the first batch comes whole even if larger."),
	broker("replica.fetch.min.bytes", TypeInt, "1", atLeast("1"),
		"The bytes a leader waits for before it answers a follower's fetch, up to replica.fetch.wait.max.ms."),
	broker("replica.fetch.response.max.bytes", TypeInt, "10485760", atLeast("0"),
		"The record bytes a follower asks for in one fetch over all its partitions from one leader."),
	broker("replica.fetch.wait.max.ms", TypeInt, "500", atLeast("0"),
		"How long a leader holds a follower's fetch that finds nothing new (ms)."),
	departs(broker("replica.lag.time.max.ms", TypeLong, "10000", Validator{},
		"A follower that has not caught up for this long leaves the ISR (ms)."),
		"Kafka: 30000; weir shrinks the ISR sooner so acks=all stalls less"),
	broker("socket.request.max.bytes", TypeInt, "104857600", atLeast("1"),
		"The largest request frame accepted (bytes); a larger one closes the connection."),
	broker("transactional.id.expiration.ms", TypeInt, "604800000", atLeast("1"),
		"A transactional id is forgotten after this long without a transaction (ms)."),
	broker("unclean.leader.election.enable", TypeBoolean, "false", Validator{},
		"Default for the topic config unclean.leader.election.enable."),
}

var (
	topicIndex  = index(topicTable)
	brokerIndex = index(brokerTable)
)

func index(t []Entry) map[string]int {
	m := make(map[string]int, len(t))
	for i, e := range t {
		m[e.Name] = i
	}
	return m
}

// TopicConfigs returns a copy of the topic config table, sorted by name.
func TopicConfigs() []Entry { return append([]Entry(nil), topicTable...) }

// BrokerConfigs returns a copy of the broker config table, sorted by name.
func BrokerConfigs() []Entry { return append([]Entry(nil), brokerTable...) }

// LookupTopic returns the topic config named name.
func LookupTopic(name string) (Entry, bool) {
	i, ok := topicIndex[name]
	if !ok {
		return Entry{}, false
	}
	return topicTable[i], true
}

// LookupBroker returns the broker config named name.
func LookupBroker(name string) (Entry, bool) {
	i, ok := brokerIndex[name]
	if !ok {
		return Entry{}, false
	}
	return brokerTable[i], true
}

// Check parses value as the entry's type and applies its validator. The
// error wraps ErrInvalidConfig and reads like Kafka's ConfigException.
func (e Entry) Check(value string) error {
	v, err := parseValue(e.Type, value)
	if err == nil {
		err = e.Valid.check(e.Type, v)
	}
	if err != nil {
		shown := value
		if e.Sensitive {
			shown = "[hidden]"
		}
		return fmt.Errorf("%w: Invalid value %s for configuration %s: %v", ErrInvalidConfig, shown, e.Name, err)
	}
	return nil
}

// value is a parsed config value: one field is meaningful, by type.
type value struct {
	b    bool
	i    int64
	f    float64
	s    string
	list []string
}

// parseValue parses s as type t, as Kafka's ConfigDef does: surrounding
// blanks are trimmed (except for strings and passwords), booleans are
// case-insensitive, lists are comma-separated with blanks trimmed.
func parseValue(t Type, s string) (value, error) {
	trimmed := strings.TrimSpace(s)
	switch t {
	case TypeBoolean:
		switch strings.ToLower(trimmed) {
		case "true":
			return value{b: true}, nil
		case "false":
			return value{}, nil
		}
		return value{}, errors.New("Expected value to be either true or false")
	case TypeInt, TypeShort, TypeLong:
		return parseInteger(t, trimmed)
	case TypeDouble:
		f, err := strconv.ParseFloat(trimmed, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return value{}, errors.New("Not a number of type DOUBLE")
		}
		return value{f: f}, nil
	case TypeList:
		return value{list: splitList(trimmed)}, nil
	case TypeString, TypeClass:
		return value{s: trimmed}, nil
	case TypePassword:
		return value{s: s}, nil
	}
	return value{}, fmt.Errorf("unknown type %d", t)
}

func parseInteger(t Type, s string) (value, error) {
	bits, name := 64, "LONG"
	switch t {
	case TypeInt:
		bits, name = 32, "INT"
	case TypeShort:
		bits, name = 16, "SHORT"
	}
	i, err := strconv.ParseInt(s, 10, bits)
	if err != nil {
		return value{}, fmt.Errorf("Not a number of type %s", name)
	}
	return value{i: i}, nil
}

func splitList(s string) []string {
	if s == "" {
		return []string{}
	}
	parts := strings.Split(s, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

func (v Validator) check(t Type, x value) error {
	if v.Min != "" || v.Max != "" {
		if err := v.checkRange(t, x); err != nil {
			return err
		}
	}
	if len(v.OneOf) == 0 {
		return nil
	}
	items := []string{x.s}
	if t == TypeList {
		items = x.list
	}
	for _, it := range items {
		if !slices.Contains(v.OneOf, it) {
			return fmt.Errorf("String must be one of: %s", strings.Join(v.OneOf, ", "))
		}
	}
	return nil
}

func (v Validator) checkRange(t Type, x value) error {
	var below, above bool
	var min, max value
	if v.Min != "" {
		min, _ = parseValue(t, v.Min)
		below = x.i < min.i || x.f < min.f
	}
	if v.Max != "" {
		max, _ = parseValue(t, v.Max)
		above = x.i > max.i || x.f > max.f
	}
	switch {
	case below && v.Max != "", above && v.Min != "":
		return fmt.Errorf("Value must be in the range [%s, %s]", v.Min, v.Max)
	case below:
		return fmt.Errorf("Value must be at least %s", v.Min)
	case above:
		return fmt.Errorf("Value must be no more than %s", v.Max)
	}
	return nil
}
