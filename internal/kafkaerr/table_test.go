package kafkaerr

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/log"
	"github.com/weirmq/weir/log/batch"
)

// Every row names one of kerr's errors (so codes, names and retriability
// are Kafka's) and real API keys, each once.
func TestRowsNameKafkaErrors(t *testing.T) {
	for i, r := range table {
		if r.err == nil || r.kafka == nil {
			t.Fatalf("row %d: %+v has a nil field", i, r)
		}
		if got := kerr.TypedErrorForCode(r.kafka.Code); got != r.kafka {
			t.Errorf("row %d (%v): code %d is not kerr's %s", i, r.err, r.kafka.Code, r.kafka.Message)
		}
		for j, api := range r.apis {
			if kmsg.NameForKey(int16(api)) == "" {
				t.Errorf("row %d (%v): API key %d is not Kafka's", i, r.err, api)
			}
			if slices.Contains(r.apis[:j], api) {
				t.Errorf("row %d (%v): API %s twice", i, r.err, api.Name())
			}
		}
	}
}

// No row is shadowed by an earlier one of its scope (it could never be
// chosen), and a row limited to APIs answers otherwise than the rows for
// every request would (else it is redundant).
func TestRowsReachable(t *testing.T) {
	for i, r := range table {
		for j := range i {
			e := table[j]
			if !errors.Is(r.err, e.err) {
				continue
			}
			if len(r.apis) == 0 && len(e.apis) == 0 {
				t.Errorf("row %d (%v) is shadowed by row %d (%v)", i, r.err, j, e.err)
			}
			for _, api := range r.apis {
				if slices.Contains(e.apis, api) {
					t.Errorf("row %d (%v) is shadowed in %s by row %d (%v)", i, r.err, api.Name(), j, e.err)
				}
			}
		}
		if len(r.apis) > 0 && Of(r.err) == r.kafka {
			t.Errorf("row %d (%v) for %v answers %s, as every request does", i, r.err, r.apis, r.kafka.Message)
		}
	}
}

// Every kind has a name and a row.
func TestEveryKindMapped(t *testing.T) {
	for k := Kind(1); k < numKinds; k++ {
		if kindNames[k] == "" {
			t.Errorf("kind %d has no name", k)
		}
		if !slices.ContainsFunc(table[:], func(r row) bool { return r.err == error(k) }) {
			t.Errorf("kind %s has no row", k)
		}
	}
	if got := Kind(0).String(); got != "unknown kind" {
		t.Errorf("Kind(0) = %q", got)
	}
}

// A sentinel made by New is itself (as errors.New's are) and of its kind,
// and never another sentinel of the same kind.
func TestNew(t *testing.T) {
	a := New(InvalidConfig, "a: invalid config")
	b := New(InvalidConfig, "b: invalid config")
	wrapped := fmt.Errorf("resolve x: %w", a)
	switch {
	case a.Error() != "a: invalid config":
		t.Errorf("text %q", a.Error())
	case !errors.Is(wrapped, a) || !errors.Is(wrapped, InvalidConfig):
		t.Error("a wrapped sentinel is not itself or its kind")
	case errors.Is(wrapped, b) || errors.Is(b, a):
		t.Error("two sentinels of one kind match each other")
	case errors.Is(wrapped, UnknownTopic):
		t.Error("a sentinel matches another kind")
	case errors.Is(errors.New("a: invalid config"), InvalidConfig):
		t.Error("a plain error matches a kind")
	}
	if InvalidConfig.Error() != "kafkaerr: invalid config" {
		t.Errorf("kind error %q", InvalidConfig.Error())
	}
}

func TestLookups(t *testing.T) {
	unknownBroker := New(UnknownBroker, "metadata: unknown broker")
	nodeFailed := New(NodeFailed, "cluster: metadata actor failed")
	storageUnavailable := New(LogUnavailable, "quorum: metadata storage unavailable")
	ioErr := errors.New("write seg.log: no space left on device")
	cases := []struct {
		name    string
		err     error
		of      *kerr.Error // Of and OfAPI(kmsg.CreateTopics)
		storage *kerr.Error // OfStorage
		api     kmsg.Key
		in      *kerr.Error // OfAPI(api); nil: as of
	}{
		{name: "nil", err: nil},
		{name: "a sentinel", err: log.ErrClosed, of: kerr.NotLeaderForPartition, storage: kerr.NotLeaderForPartition},
		{name: "wrapped", err: fmt.Errorf("read t-0 at 9: %w", log.ErrOffsetOutOfRange), of: kerr.OffsetOutOfRange, storage: kerr.OffsetOutOfRange},
		{name: "a kind", err: fmt.Errorf("%w: node 4", unknownBroker), of: kerr.InvalidReplicaAssignment, storage: kerr.InvalidReplicaAssignment,
			api: kmsg.AlterPartition, in: kerr.StaleBrokerEpoch},
		{name: "a kind in another API", err: unknownBroker, of: kerr.InvalidReplicaAssignment, storage: kerr.InvalidReplicaAssignment,
			api: kmsg.BrokerHeartbeat, in: kerr.BrokerIDNotRegistered},
		{name: "an API without rows", err: unknownBroker, of: kerr.InvalidReplicaAssignment, storage: kerr.InvalidReplicaAssignment,
			api: kmsg.BrokerRegistration},
		// On-disk corruption found by the batch codec is the log's: storage.
		{name: "log before batch", err: fmt.Errorf("%w: seg.log: batch at 40: %w", log.ErrCorrupt, batch.ErrCorrupt),
			of: kerr.KafkaStorageError, storage: kerr.KafkaStorageError},
		{name: "bound before corrupt", err: fmt.Errorf("%w: %w: zstd", batch.ErrCorrupt, batch.ErrOverLimit),
			of: kerr.MessageTooLarge, storage: kerr.MessageTooLarge},
		// A failed node answers UNKNOWN_SERVER_ERROR, whatever failed.
		{name: "failed node", err: fmt.Errorf("%w: %w", nodeFailed, fmt.Errorf("%w: index", log.ErrCorrupt)),
			of: kerr.UnknownServerError, storage: kerr.UnknownServerError, api: kmsg.AlterPartition},
		{name: "metadata storage", err: fmt.Errorf("cluster: propose: %w: %w", storageUnavailable, log.ErrLogFailed),
			of: kerr.RequestTimedOut, storage: kerr.RequestTimedOut},
		{name: "a row before a Kafka error", err: fmt.Errorf("%w: %w", kerr.NotEnoughReplicas, log.ErrClosed),
			of: kerr.NotLeaderForPartition, storage: kerr.NotLeaderForPartition},
		{name: "a Kafka error", err: fmt.Errorf("append: %w", kerr.InvalidProducerEpoch), of: kerr.InvalidProducerEpoch, storage: kerr.InvalidProducerEpoch},
		{name: "a deadline", err: fmt.Errorf("wait: %w", context.DeadlineExceeded), of: kerr.RequestTimedOut, storage: kerr.RequestTimedOut},
		{name: "anything else", err: ioErr, of: kerr.UnknownServerError, storage: kerr.KafkaStorageError},
		{name: "a typed nil", err: (*kerr.Error)(nil), of: kerr.UnknownServerError, storage: kerr.KafkaStorageError},
	}
	for _, tc := range cases {
		in := tc.in
		if in == nil {
			in = tc.of
		}
		if got := Of(tc.err); got != tc.of {
			t.Errorf("%s: Of = %v, want %v", tc.name, got, tc.of)
		}
		if got := OfStorage(tc.err); got != tc.storage {
			t.Errorf("%s: OfStorage = %v, want %v", tc.name, got, tc.storage)
		}
		if got := OfAPI(tc.api, tc.err); got != in {
			t.Errorf("%s: OfAPI(%s) = %v, want %v", tc.name, tc.api.Name(), got, in)
		}
		if got, want := Code(tc.err), code(tc.of); got != want {
			t.Errorf("%s: Code = %d, want %d", tc.name, got, want)
		}
		if got, want := StorageCode(tc.err), code(tc.storage); got != want {
			t.Errorf("%s: StorageCode = %d, want %d", tc.name, got, want)
		}
	}
}
