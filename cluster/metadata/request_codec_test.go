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
