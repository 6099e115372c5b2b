package kafkaerr_test

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/actors/group"
	"github.com/weirmq/weir/actors/partition"
	"github.com/weirmq/weir/cluster"
	"github.com/weirmq/weir/cluster/config"
	"github.com/weirmq/weir/cluster/metadata"
	"github.com/weirmq/weir/cluster/quorum"
	"github.com/weirmq/weir/internal/kafkaerr"
	"github.com/weirmq/weir/log"
	"github.com/weirmq/weir/log/batch"
)

// mappedDirs are the packages (from the module root) whose exported
// sentinels sentinels must list, each under its package name.
var mappedDirs = map[string]string{
	"log":              "log",
	"log/batch":        "batch",
	"cluster/config":   "config",
	"cluster/metadata": "metadata",
	"cluster/quorum":   "quorum",
	"actors/partition": "partition",
	"actors/group":     "group",
	"cluster":          "cluster",
}

// sentinel is what one exported sentinel answers: of in every request
// (kafkaerr.Of), in the requests of in otherwise. One that no row names
// says in why it may answer the fallback, UNKNOWN_SERVER_ERROR (it
// reaches no client, or what wraps it decides).
type sentinel struct {
	err error
	of  *kerr.Error
	in  map[kmsg.Key]*kerr.Error
	why string
}

var (
	usErr = kerr.UnknownServerError

	// The broker requests in which an unregistered or stale broker
	// answers otherwise.
	unknownBrokerIn = map[kmsg.Key]*kerr.Error{
		kmsg.BrokerHeartbeat: kerr.BrokerIDNotRegistered, kmsg.ElectLeaders: kerr.BrokerIDNotRegistered,
		kmsg.AllocateProducerIDs: kerr.BrokerIDNotRegistered, kmsg.AlterPartition: kerr.StaleBrokerEpoch,
	}
	staleBrokerIn = map[kmsg.Key]*kerr.Error{
		kmsg.BrokerHeartbeat: kerr.StaleBrokerEpoch, kmsg.ElectLeaders: kerr.StaleBrokerEpoch,
		kmsg.AllocateProducerIDs: kerr.StaleBrokerEpoch, kmsg.AlterPartition: kerr.StaleBrokerEpoch,
	}
)

// sentinels lists every exported sentinel of mappedDirs.
var sentinels = map[string]sentinel{
	"log.ErrOffsetOutOfRange": {err: log.ErrOffsetOutOfRange, of: kerr.OffsetOutOfRange},
	"log.ErrInvalidOffset":    {err: log.ErrInvalidOffset, of: usErr},
	"log.ErrCorrupt":          {err: log.ErrCorrupt, of: kerr.KafkaStorageError},
	"log.ErrClosed":           {err: log.ErrClosed, of: kerr.NotLeaderForPartition},
	"log.ErrRecordTooLarge":   {err: log.ErrRecordTooLarge, of: kerr.RecordListTooLarge},
	"log.ErrInvalidConfig":    {err: log.ErrInvalidConfig, of: kerr.InvalidConfig},
	"log.ErrLogFailed":        {err: log.ErrLogFailed, of: kerr.KafkaStorageError},
	"log.ErrLocked":           {err: log.ErrLocked, of: usErr, why: "opening a data directory"},
	"log.ErrNotCompacted":     {err: log.ErrNotCompacted, of: usErr, why: "the cleaner's"},
	"log.ErrCleanAborted":     {err: log.ErrCleanAborted, of: usErr, why: "the cleaner's"},
	"log.ErrLogNotOpen":       {err: log.ErrLogNotOpen, of: usErr, why: "the cleaner's"},
	"log.ErrFileName":         {err: log.ErrFileName, of: usErr, why: "weir dump-log's"},

	"batch.ErrCorrupt":          {err: batch.ErrCorrupt, of: kerr.CorruptMessage},
	"batch.ErrUnsupportedMagic": {err: batch.ErrUnsupportedMagic, of: kerr.InvalidRecord},
	"batch.ErrTruncated":        {err: batch.ErrTruncated, of: kerr.CorruptMessage},
	"batch.ErrOverLimit":        {err: batch.ErrOverLimit, of: kerr.MessageTooLarge},
	"batch.ErrNoKey":            {err: batch.ErrNoKey, of: kerr.InvalidRecord},
	"batch.ErrBuild":            {err: batch.ErrBuild, of: usErr, why: "building batches the broker writes"},

	"config.ErrInvalidConfig": {err: config.ErrInvalidConfig, of: kerr.InvalidConfig},

	"metadata.ErrInvalidRecord":            {err: metadata.ErrInvalidRecord, of: kerr.InvalidRequest},
	"metadata.ErrUnknownRecordType":        {err: metadata.ErrUnknownRecordType, of: usErr, why: "decoding the metadata log"},
	"metadata.ErrUnsupportedVersion":       {err: metadata.ErrUnsupportedVersion, of: usErr, why: "decoding the metadata log"},
	"metadata.ErrMalformedRecord":          {err: metadata.ErrMalformedRecord, of: usErr, why: "decoding the metadata log or a forwarded request"},
	"metadata.ErrInvalidTopic":             {err: metadata.ErrInvalidTopic, of: kerr.InvalidTopicException},
	"metadata.ErrTopicExists":              {err: metadata.ErrTopicExists, of: kerr.TopicAlreadyExists},
	"metadata.ErrInvalidTopicID":           {err: metadata.ErrInvalidTopicID, of: usErr, why: "the controller draws topic ids"},
	"metadata.ErrUnknownTopic":             {err: metadata.ErrUnknownTopic, of: kerr.UnknownTopicOrPartition, in: map[kmsg.Key]*kerr.Error{kmsg.ElectLeaders: kerr.UnknownTopicID, kmsg.AlterPartition: kerr.UnknownTopicID}},
	"metadata.ErrUnknownPartition":         {err: metadata.ErrUnknownPartition, of: kerr.UnknownTopicOrPartition},
	"metadata.ErrInvalidPartitions":        {err: metadata.ErrInvalidPartitions, of: kerr.InvalidPartitions},
	"metadata.ErrInvalidReplicationFactor": {err: metadata.ErrInvalidReplicationFactor, of: kerr.InvalidReplicationFactor},
	"metadata.ErrInvalidConfig":            {err: metadata.ErrInvalidConfig, of: kerr.InvalidConfig},
	"metadata.ErrUnknownBroker":            {err: metadata.ErrUnknownBroker, of: kerr.InvalidReplicaAssignment, in: unknownBrokerIn},
	"metadata.ErrStaleBrokerEpoch":         {err: metadata.ErrStaleBrokerEpoch, of: usErr, in: staleBrokerIn},
	"metadata.ErrBrokerFenced":             {err: metadata.ErrBrokerFenced, of: kerr.InvalidReplicaAssignment, in: map[kmsg.Key]*kerr.Error{kmsg.ElectLeaders: kerr.IneligibleReplica}},
	"metadata.ErrStalePartitionEpoch":      {err: metadata.ErrStalePartitionEpoch, of: usErr, in: map[kmsg.Key]*kerr.Error{kmsg.ElectLeaders: kerr.LeaderNotAvailable, kmsg.AlterPartition: kerr.InvalidUpdateVersion}},
	"metadata.ErrFencedLeaderEpoch":        {err: metadata.ErrFencedLeaderEpoch, of: usErr, in: map[kmsg.Key]*kerr.Error{kmsg.AlterPartition: kerr.FencedLeaderEpoch}},
	"metadata.ErrNotLeader":                {err: metadata.ErrNotLeader, of: usErr, in: map[kmsg.Key]*kerr.Error{kmsg.AlterPartition: kerr.NotLeaderForPartition}},
	"metadata.ErrLeaderExists":             {err: metadata.ErrLeaderExists, of: usErr, in: map[kmsg.Key]*kerr.Error{kmsg.ElectLeaders: kerr.ElectionNotNeeded}},
	"metadata.ErrIneligibleReplica":        {err: metadata.ErrIneligibleReplica, of: usErr, in: map[kmsg.Key]*kerr.Error{kmsg.ElectLeaders: kerr.IneligibleReplica, kmsg.AlterPartition: kerr.IneligibleReplica}},
	"metadata.ErrProducerIDsExhausted":     {err: metadata.ErrProducerIDsExhausted, of: usErr},
	"metadata.ErrLogUnavailable":           {err: metadata.ErrLogUnavailable, of: kerr.RequestTimedOut},
	"metadata.ErrOpTooLarge":               {err: metadata.ErrOpTooLarge, of: kerr.PolicyViolation},

	"quorum.ErrCorrupt":            {err: quorum.ErrCorrupt, of: usErr, why: "stops the node: answered as cluster.ErrNodeFailed"},
	"quorum.ErrNotLeader":          {err: quorum.ErrNotLeader, of: kerr.NotController},
	"quorum.ErrProposalDropped":    {err: quorum.ErrProposalDropped, of: kerr.NotController},
	"quorum.ErrApplyFailed":        {err: quorum.ErrApplyFailed, of: usErr, why: "stops the node: answered as cluster.ErrNodeFailed"},
	"quorum.ErrStorageUnavailable": {err: quorum.ErrStorageUnavailable, of: kerr.RequestTimedOut},
	"quorum.ErrInvalidConfig":      {err: quorum.ErrInvalidConfig, of: usErr, why: "starting a node"},
	"quorum.ErrEmptyProposal":      {err: quorum.ErrEmptyProposal, of: usErr, why: "a controller bug"},
	"quorum.ErrNotLearner":         {err: quorum.ErrNotLearner, of: usErr, why: "the controller adding a learner: never answered to a client"},

	"partition.ErrNotStarted":      {err: partition.ErrNotStarted, of: usErr, why: "the actor answers its own codes while not started"},
	"partition.ErrUnexpectedReply": {err: partition.ErrUnexpectedReply, of: usErr, why: "the Client facade's, a bug"},
	"partition.ErrCorruptSnapshot": {err: partition.ErrCorruptSnapshot, of: usErr, why: "starting a replica (the log is replayed instead)"},
	"partition.ErrInvalidConfig":   {err: partition.ErrInvalidConfig, of: usErr, why: "starting a replica"},

	"group.ErrBadRecord":     {err: group.ErrBadRecord, of: usErr, why: "loading __consumer_offsets (the record is skipped)"},
	"group.ErrInvalidConfig": {err: group.ErrInvalidConfig, of: usErr, why: "starting the coordinators"},

	"cluster.ErrNodeFailed":    {err: cluster.ErrNodeFailed, of: usErr},
	"cluster.ErrStopped":       {err: cluster.ErrStopped, of: usErr, why: "the node stopped, and its listener with it"},
	"cluster.ErrInvalidConfig": {err: cluster.ErrInvalidConfig, of: usErr, why: "starting a node"},
	"cluster.ErrDuplicateNode": {err: cluster.ErrDuplicateNode, of: usErr, why: "starting a node whose id another live process holds"},
}

// allAPIs are the requests whose answers are checked for each sentinel.
var allAPIs = []kmsg.Key{
	kmsg.Produce, kmsg.Fetch, kmsg.ListOffsets, kmsg.CreateTopics, kmsg.DeleteTopics, kmsg.DeleteRecords,
	kmsg.CreatePartitions, kmsg.IncrementalAlterConfigs, kmsg.ElectLeaders, kmsg.AlterPartition,
	kmsg.BrokerRegistration, kmsg.BrokerHeartbeat, kmsg.AllocateProducerIDs,
}

// Each sentinel, bare and wrapped, answers what the list says in every
// request.
func TestSentinelAnswers(t *testing.T) {
	for name, s := range sentinels {
		for _, err := range []error{s.err, fmt.Errorf("context: %w", s.err)} {
			if got := kafkaerr.Of(err); got != s.of {
				t.Errorf("%s: Of(%v) = %v, want %v", name, err, got, s.of)
			}
			for _, api := range allAPIs {
				want := s.of
				if w, ok := s.in[api]; ok {
					want = w
				}
				if got := kafkaerr.OfAPI(api, err); got != want {
					t.Errorf("%s: OfAPI(%s, %v) = %v, want %v", name, api.Name(), err, got, want)
				}
			}
		}
		if s.why == "" && s.of == usErr && len(s.in) == 0 && !slices.Contains(explicitUnknown, name) {
			t.Errorf("%s reaches clients as UNKNOWN_SERVER_ERROR by the fallback: give it a row or say why it is internal", name)
		}
	}
}

// explicitUnknown are the sentinels whose row is UNKNOWN_SERVER_ERROR, as
// Kafka's answer.
var explicitUnknown = []string{"log.ErrInvalidOffset", "metadata.ErrProducerIDsExhausted", "cluster.ErrNodeFailed"}

// Sentinels of one package are distinct, and metadata's and config's
// invalid-config sentinels, of one kind, stay apart.
func TestSentinelsDistinct(t *testing.T) {
	for a, sa := range sentinels {
		for b, sb := range sentinels {
			if a != b && sa.err == sb.err {
				t.Errorf("%s and %s are one error", a, b)
			}
		}
	}
	if errors.Is(metadata.ErrInvalidConfig, config.ErrInvalidConfig) {
		t.Error("metadata.ErrInvalidConfig matches config.ErrInvalidConfig")
	}
}

// The list holds every exported Err* variable of mappedDirs, and nothing
// else: a new sentinel fails here until its answer is decided.
func TestSentinelListComplete(t *testing.T) {
	found := map[string]bool{}
	for dir, pkg := range mappedDirs {
		fset := token.NewFileSet()
		files, err := filepath.Glob(filepath.Join("..", "..", filepath.FromSlash(dir), "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v)", dir, err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || g.Tok != token.VAR {
					continue
				}
				for _, spec := range g.Specs {
					for _, id := range spec.(*ast.ValueSpec).Names {
						if strings.HasPrefix(id.Name, "Err") && id.IsExported() {
							found[pkg+"."+id.Name] = true
						}
					}
				}
			}
		}
	}
	for name := range found {
		if _, ok := sentinels[name]; !ok {
			t.Errorf("%s is not in the list: decide what it answers", name)
		}
	}
	for name := range sentinels {
		if !found[name] {
			t.Errorf("%s is listed but not declared in its package", name)
		}
	}
}
