package metadata

import (
	"bytes"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// Requests and results are encoded as records are (codec.go): one msgpack
// value, the 3-element array [kind, version, payload], payload the struct
// as a msgpack array of its fields in declaration order. A request and its
// result share a kind; which one the bytes hold is the caller's context
// (EncodeRequest and DecodeRequest, EncodeResult and DecodeResult).
// Changing a field needs a new version, as for records.

// messageCodec describes how to read the request or result of one kind.
type messageCodec[T any] struct {
	name    string
	version uint8
	decode  func(*msgpack.Decoder) (T, error)
}

var requestCodecs = map[requestKind]messageCodec[Request]{
	kindCreateTopics:        {"CreateTopicsRequest", 0, decodeMessage[Request, CreateTopicsRequest]},
	kindCreatePartitions:    {"CreatePartitionsRequest", 0, decodeMessage[Request, CreatePartitionsRequest]},
	kindDeleteTopics:        {"DeleteTopicsRequest", 0, decodeMessage[Request, DeleteTopicsRequest]},
	kindAlterConfigs:        {"AlterConfigsRequest", 0, decodeMessage[Request, AlterConfigsRequest]},
	kindAutoCreateTopics:    {"AutoCreateTopicsRequest", 0, decodeMessage[Request, AutoCreateTopicsRequest]},
	kindAllocateProducerIDs: {"AllocateProducerIDsRequest", 0, decodeMessage[Request, AllocateProducerIDsRequest]},
	kindRegisterBroker:      {"RegisterBrokerRequest", 0, decodeMessage[Request, RegisterBrokerRequest]},
	kindBrokerHeartbeat:     {"BrokerHeartbeatRequest", 0, decodeMessage[Request, BrokerHeartbeatRequest]},
	kindElectLeaders:        {"ElectLeadersRequest", 0, decodeMessage[Request, ElectLeadersRequest]},
	kindAlterPartition:      {"AlterPartitionRequest", 0, decodeMessage[Request, AlterPartitionRequest]},
	kindMoveLeaders:         {"MoveLeadersRequest", 0, decodeMessage[Request, MoveLeadersRequest]},
}

var resultCodecs = map[requestKind]messageCodec[Result]{
	kindCreateTopics:        {"CreateTopicsResult", 0, decodeMessage[Result, CreateTopicsResult]},
	kindCreatePartitions:    {"CreatePartitionsResult", 0, decodeMessage[Result, CreatePartitionsResult]},
	kindDeleteTopics:        {"DeleteTopicsResult", 0, decodeMessage[Result, DeleteTopicsResult]},
	kindAlterConfigs:        {"AlterConfigsResult", 0, decodeMessage[Result, AlterConfigsResult]},
	kindAutoCreateTopics:    {"AutoCreateTopicsResult", 0, decodeMessage[Result, AutoCreateTopicsResult]},
	kindAllocateProducerIDs: {"AllocateProducerIDsResult", 0, decodeMessage[Result, AllocateProducerIDsResult]},
	kindRegisterBroker:      {"RegisterBrokerResult", 0, decodeMessage[Result, RegisterBrokerResult]},
	kindBrokerHeartbeat:     {"BrokerHeartbeatResult", 0, decodeMessage[Result, BrokerHeartbeatResult]},
	kindElectLeaders:        {"ElectLeadersResult", 0, decodeMessage[Result, ElectLeadersResult]},
	kindAlterPartition:      {"AlterPartitionResult", 0, decodeMessage[Result, AlterPartitionResult]},
	kindMoveLeaders:         {"MoveLeadersResult", 0, decodeMessage[Result, MoveLeadersResult]},
}

// decodeMessage decodes a *M, which implements T (Request or Result).
func decodeMessage[T any, M any](d *msgpack.Decoder) (T, error) {
	m := new(M)
	if err := d.Decode(m); err != nil {
		var zero T
		return zero, err
	}
	return any(m).(T), nil
}

// EncodeRequest returns the bytes of r.
func EncodeRequest(r Request) ([]byte, error) {
	if r == nil {
		return nil, fmt.Errorf("%w: encode nil request", ErrUnknownRecordType)
	}
	codec, ok := requestCodecs[r.kind()]
	if !ok {
		return nil, fmt.Errorf("%w: encode request %T", ErrUnknownRecordType, r)
	}
	return encodeMessage(uint8(r.kind()), codec.version, r)
}

// EncodeResult returns the bytes of r.
func EncodeResult(r Result) ([]byte, error) {
	if r == nil {
		return nil, fmt.Errorf("%w: encode nil result", ErrUnknownRecordType)
	}
	codec, ok := resultCodecs[r.kind()]
	if !ok {
		return nil, fmt.Errorf("%w: encode result %T", ErrUnknownRecordType, r)
	}
	return encodeMessage(uint8(r.kind()), codec.version, r)
}

func encodeMessage(kind, version uint8, v any) ([]byte, error) {
	var buf bytes.Buffer
	buf.Write([]byte{envelopeHeader, kind, version})
	enc := msgpack.GetEncoder()
	defer msgpack.PutEncoder(enc)
	enc.Reset(&buf)
	enc.UseCompactInts(true)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("metadata: encode %T: %w", v, err)
	}
	return buf.Bytes(), nil
}

// DecodeRequest parses the bytes of one request. Bytes that are not a
// well-formed request of a known kind and version give an error wrapping
// ErrMalformedRecord, ErrUnknownRecordType or ErrUnsupportedVersion; it
// never panics, and it allocates at most in proportion to len(b).
func DecodeRequest(b []byte) (Request, error) { return decodeEnvelope(b, requestCodecs) }

// DecodeResult parses the bytes of one result, as DecodeRequest does.
func DecodeResult(b []byte) (Result, error) { return decodeEnvelope(b, resultCodecs) }

func decodeEnvelope[T any](b []byte, codecs map[requestKind]messageCodec[T]) (T, error) {
	var zero T
	if len(b) < 3 || b[0] != envelopeHeader || b[1] > 0x7f || b[2] > 0x7f {
		return zero, fmt.Errorf("%w: bad envelope header", ErrMalformedRecord)
	}
	kind, version, payload := requestKind(b[1]), b[2], b[3:]
	codec, ok := codecs[kind]
	if !ok {
		return zero, fmt.Errorf("%w: kind %d", ErrUnknownRecordType, kind)
	}
	if version != codec.version {
		return zero, fmt.Errorf("%w: %s version %d (this build reads %d)", ErrUnsupportedVersion, codec.name, version, codec.version)
	}
	if err := checkPayload(payload); err != nil {
		return zero, fmt.Errorf("%w: %s: %w", ErrMalformedRecord, codec.name, err)
	}
	dec := msgpack.GetDecoder()
	defer msgpack.PutDecoder(dec)
	dec.Reset(bytes.NewReader(payload))
	dec.DisallowUnknownFields(true)
	m, err := codec.decode(dec)
	if err != nil {
		return zero, fmt.Errorf("%w: %s: %w", ErrMalformedRecord, codec.name, err)
	}
	return m, nil
}
