package metadata

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

func strp(s string) *string { return &s }

// sampleRequests has one request of every kind, with every field set.
func sampleRequests() []Request {
	return []Request{
		&CreateTopicsRequest{ValidateOnly: true, Topics: []CreatableTopic{
			{Name: "orders", NumPartitions: 3, ReplicationFactor: 2,
				Configs: []ConfigValue{{Name: "retention.ms", Value: strp("1000")}, {Name: "cleanup.policy"}}},
			{Name: "manual", NumPartitions: -1, ReplicationFactor: -1,
				Assignments: []ReplicaAssignment{{Partition: 0, Replicas: []int32{1, 2}}, {Partition: 1, Replicas: []int32{2, 3}}}},
		}},
		&CreatePartitionsRequest{ValidateOnly: true, Topics: []PartitionsIncrease{
			{Name: "orders", Count: 5},
			{Name: "manual", Count: 3, Assigned: true, Assignments: [][]int32{{3, 1}}},
		}},
		&DeleteTopicsRequest{Topics: []TopicRef{{Name: strp("orders")}, {ID: uuidN(4)}}},
		&AlterConfigsRequest{Node: 2, Incremental: true, ValidateOnly: true, Resources: []AlterConfigsResource{
			{Type: 2, Name: "orders", Configs: []ConfigChange{{Name: "retention.ms", Op: OpSet, Value: strp("5")}, {Name: "x", Op: OpDelete}}},
			{Type: 4, Name: "2"},
		}},
		&AutoCreateTopicsRequest{Names: []string{"a", "b"}},
		&AllocateProducerIDsRequest{BrokerID: 3, BrokerEpoch: 77},
		&RegisterBrokerRequest{NodeID: 2, IncarnationID: uuidN(7), Host: "broker-2.example", Port: 9092,
			ActorAddress: "10.0.0.2:8090", Rack: "rack-b", NowMs: 123456, PreviousBrokerEpoch: 31},
		&BrokerHeartbeatRequest{NodeID: 2, BrokerEpoch: 40, MetadataOffset: 99, WantFence: true, WantShutDown: true, NowMs: 7},
		&ElectLeadersRequest{Proposals: []LeaderProposal{
			{TopicID: uuidN(1), Partition: 3, Candidate: 2, BrokerEpoch: 40, PartitionEpoch: 5, Unclean: true},
			{TopicID: uuidN(2), Candidate: 1, BrokerEpoch: 41},
		}},
		&MoveLeadersRequest{BrokerID: 3, BrokerEpoch: 12, LeaveISR: true, Moves: []LeaderMove{
			{TopicID: uuidN(1), Partition: 2, LeaderEpoch: 5, PartitionEpoch: 9, To: 1},
		}},
		&AlterPartitionRequest{BrokerID: 2, BrokerEpoch: 40, Changes: []ISRProposal{
			{TopicID: uuidN(1), Partition: 3, Leader: 2, BrokerEpoch: 40, LeaderEpoch: 4, PartitionEpoch: 6, ISR: []int32{2, 1}},
		}},
	}
}

// sampleResults has one result of every kind, with every field set.
func sampleResults() []Result {
	return []Result{
		&CreateTopicsResult{Topics: []CreatedTopic{
			{Name: "orders", TopicID: uuidN(1), NumPartitions: 3, ReplicationFactor: 2, Configs: []CreatedTopicConfig{
				{Name: "retention.ms", Value: strp("1000"), Source: 1}, {Name: "secret", ReadOnly: true, Sensitive: true, Source: 5}}},
			{Name: "bad", Error: APIError{Code: 36, Message: "Topic 'bad' already exists."}, ConfigErrorCode: 40},
		}},
		&CreatePartitionsResult{Topics: []TopicError{{Name: "orders"}, {Name: "x", Error: APIError{Code: 37, Message: "no"}}}},
		&DeleteTopicsResult{Topics: []DeletedTopic{{Name: strp("orders"), ID: uuidN(1)}, {ID: uuidN(2), Error: APIError{Code: 100, Message: "m"}}}},
		&AlterConfigsResult{Resources: []ResourceError{{Type: 2, Name: "orders"}, {Type: 4, Name: "1", Error: APIError{Code: 42, Message: "m"}}}},
		&AutoCreateTopicsResult{Topics: []TopicError{{Name: "a"}, {Name: "b", Error: APIError{Code: 5, Message: "retry"}}}},
		&AllocateProducerIDsResult{FirstProducerID: 4000, Size: 1000, Error: APIError{Code: 77, Message: "stale"}},
		&RegisterBrokerResult{Error: APIError{Code: 101, Message: "dup"}, BrokerEpoch: 12},
		&BrokerHeartbeatResult{Error: APIError{Code: 77, Message: "m"}, IsCaughtUp: true, IsFenced: true, ShouldShutDown: true},
		&ElectLeadersResult{Errors: []APIError{{}, {Code: 84, Message: "led"}}},
		&MoveLeadersResult{Errors: []APIError{{}, {Code: 74, Message: "moved on"}}, LeftISR: 2},
		&AlterPartitionResult{Partitions: []AlterPartitionItem{
			{TopicID: uuidN(1), Partition: 3, LeaderEpoch: 4, PartitionEpoch: 7, ISR: []int32{2}},
			{TopicID: uuidN(2), Error: APIError{Code: 95, Message: "stale"}},
		}},
	}
}

// Every request and result crosses the codec intact and deterministically,
// and every kind has a sample.
func TestRequestResultRoundTrip(t *testing.T) {
	seenReq, seenRes := map[requestKind]bool{}, map[requestKind]bool{}
	for _, r := range sampleRequests() {
		b, err := EncodeRequest(r)
		if err != nil {
			t.Fatalf("%T: %v", r, err)
		}
		got, err := DecodeRequest(b)
		if err != nil {
			t.Fatalf("%T: %v", r, err)
		}
		if !reflect.DeepEqual(got, r) {
			t.Fatalf("round trip:\n got %#v\nwant %#v", got, r)
		}
		if again, _ := EncodeRequest(got); !bytes.Equal(again, b) {
			t.Fatalf("%T: encoding is not deterministic", r)
		}
		seenReq[r.kind()] = true
	}
	for _, r := range sampleResults() {
		b, err := EncodeResult(r)
		if err != nil {
			t.Fatalf("%T: %v", r, err)
		}
		got, err := DecodeResult(b)
		if err != nil {
			t.Fatalf("%T: %v", r, err)
		}
		if !reflect.DeepEqual(got, r) {
			t.Fatalf("round trip:\n got %#v\nwant %#v", got, r)
		}
		seenRes[r.kind()] = true
	}
	for k, c := range requestCodecs {
		if !seenReq[k] {
			t.Errorf("no sample %s", c.name)
		}
	}
	for k, c := range resultCodecs {
		if !seenRes[k] {
			t.Errorf("no sample %s", c.name)
		}
	}
}

// Requests and results are plain data: no functions, channels, maps or
// interfaces anywhere inside, so they can be sent to another node.
func TestRequestsArePlainData(t *testing.T) {
	var check func(path string, typ reflect.Type)
	check = func(path string, typ reflect.Type) {
		switch typ.Kind() {
		case reflect.Func, reflect.Chan, reflect.Interface, reflect.Map, reflect.UnsafePointer, reflect.Uintptr:
			t.Errorf("%s is a %s", path, typ.Kind())
		case reflect.Pointer, reflect.Slice, reflect.Array:
			check(path+"[]", typ.Elem())
		case reflect.Struct:
			for i := range typ.NumField() {
				f := typ.Field(i)
				check(path+"."+f.Name, f.Type)
			}
		}
	}
	for _, r := range sampleRequests() {
		check(reflect.TypeOf(r).String(), reflect.TypeOf(r))
	}
	for _, r := range sampleResults() {
		check(reflect.TypeOf(r).String(), reflect.TypeOf(r))
	}
}

func TestDecodeRequestErrors(t *testing.T) {
	good, _ := EncodeRequest(&AutoCreateTopicsRequest{Names: []string{"a"}})
	for _, c := range []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, ErrMalformedRecord},
		{"unknown kind", []byte{envelopeHeader, 0x70, 0, 0x91, 0xc0}, ErrUnknownRecordType},
		{"newer version", []byte{envelopeHeader, byte(kindAutoCreateTopics), 9, 0x91, 0xc0}, ErrUnsupportedVersion},
		{"truncated", good[:len(good)-1], ErrMalformedRecord},
		{"hostile length", []byte{envelopeHeader, byte(kindAutoCreateTopics), 0, 0x91, 0xdd, 0xff, 0xff, 0xff, 0xff}, ErrMalformedRecord},
		{"wrong shape", []byte{envelopeHeader, byte(kindAutoCreateTopics), 0, 0x91, 0x05}, ErrMalformedRecord},
	} {
		if _, err := DecodeRequest(c.b); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		if _, err := DecodeResult(c.b); !errors.Is(err, c.want) {
			t.Errorf("%s (result): %v, want %v", c.name, err, c.want)
		}
	}
}

// A LeaderProposal encoded before Unclean was appended (five fields)
// still decodes, with Unclean false; other lengths are refused.
func TestLeaderProposalWithoutUnclean(t *testing.T) {
	type proposalV0 struct {
		_msgpack       struct{} `msgpack:",as_array"`
		TopicID        UUID
		Partition      int32
		Candidate      int32
		BrokerEpoch    int64
		PartitionEpoch int32
	}
	type requestV0 struct {
		_msgpack  struct{} `msgpack:",as_array"`
		Proposals []proposalV0
	}
	old := requestV0{Proposals: []proposalV0{{TopicID: uuidN(1), Partition: 2, Candidate: 3, BrokerEpoch: 4, PartitionEpoch: 5}}}
	b, err := encodeMessage(uint8(kindElectLeaders), 0, old)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeRequest(b)
	if err != nil {
		t.Fatal(err)
	}
	want := &ElectLeadersRequest{Proposals: []LeaderProposal{{TopicID: uuidN(1), Partition: 2, Candidate: 3, BrokerEpoch: 4, PartitionEpoch: 5}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v, want %#v", got, want)
	}
	// Hand-made: six fields decode, seven or four are not a LeaderProposal.
	proposal := func(n byte) []byte {
		b := []byte{envelopeHeader, byte(kindElectLeaders), 0, 0x91, 0x91, 0x90 | n, 0xc4, 16}
		b = append(b, make([]byte, 16)...)
		for i := byte(1); i < n; i++ {
			if i == 5 {
				b = append(b, 0xc3) // Unclean: true
			} else {
				b = append(b, 0x01)
			}
		}
		return b
	}
	if got, err := DecodeRequest(proposal(6)); err != nil || !got.(*ElectLeadersRequest).Proposals[0].Unclean {
		t.Errorf("six fields: %+v, %v", got, err)
	}
	for _, n := range []byte{4, 7} {
		if _, err := DecodeRequest(proposal(n)); !errors.Is(err, ErrMalformedRecord) {
			t.Errorf("%d fields: %v", n, err)
		}
	}
}

// A RegisterBrokerRequest encoded before PreviousBrokerEpoch was appended
// (seven fields) still decodes, as an unclean shutdown (-1); other lengths
// are refused.
func TestRegisterBrokerWithoutPreviousEpoch(t *testing.T) {
	type requestV0 struct {
		_msgpack      struct{} `msgpack:",as_array"`
		NodeID        int32
		IncarnationID UUID
		Host          string
		Port          int32
		ActorAddress  string
		Rack          string
		NowMs         int64
	}
	old := requestV0{NodeID: 2, IncarnationID: uuidN(7), Host: "h", Port: 9092, ActorAddress: "a", Rack: "r", NowMs: 5}
	b, err := encodeMessage(uint8(kindRegisterBroker), 0, old)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeRequest(b)
	if err != nil {
		t.Fatal(err)
	}
	want := &RegisterBrokerRequest{NodeID: 2, IncarnationID: uuidN(7), Host: "h", Port: 9092, ActorAddress: "a", Rack: "r", NowMs: 5,
		PreviousBrokerEpoch: -1}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v, want %#v", got, want)
	}
	type requestShort struct {
		_msgpack struct{} `msgpack:",as_array"`
		NodeID   int32
	}
	b, _ = encodeMessage(uint8(kindRegisterBroker), 0, requestShort{NodeID: 2})
	if _, err := DecodeRequest(b); !errors.Is(err, ErrMalformedRecord) {
		t.Errorf("one field: %v", err)
	}
}
