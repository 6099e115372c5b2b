package perf

import (
	"strconv"
	"strings"
	"time"
)

// SetProperty applies one Kafka producer config, named as the Java
// client's ProducerConfig names it (what kafka-producer-perf-test.sh takes
// in --producer-props and --producer.config), to c. It returns whether the
// name is one a run uses: bootstrap.servers, acks, linger.ms, batch.size,
// compression.type, enable.idempotence and
// max.in.flight.requests.per.connection. Other names (buffer.memory,
// client.id, serializers, ...) have no effect and report false, as the
// Java client only warns about configs it does not know. An invalid value
// of a used name is an error matching ErrInvalidConfig.
//
// As in the Java client, a caller that sets acks to other than all without
// setting enable.idempotence should turn Idempotent off.
func (c *ProducerConfig) SetProperty(name, value string) (bool, error) {
	v := strings.TrimSpace(value)
	switch name {
	case "bootstrap.servers":
		var brokers []string
		for _, b := range strings.Split(v, ",") {
			if b = strings.TrimSpace(b); b == "" {
				return true, invalidf("bootstrap.servers %q has an empty address", value)
			}
			brokers = append(brokers, b)
		}
		c.Brokers = brokers
	case "acks":
		a, err := ParseAcks(v)
		if err != nil {
			return true, err
		}
		c.Acks = a
	case "linger.ms":
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms < 0 {
			return true, invalidf("linger.ms %q, want a whole number of milliseconds, at least 0", value)
		}
		c.Linger = time.Duration(ms) * time.Millisecond
	case "batch.size":
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n < 1 {
			return true, invalidf("batch.size %q, want a number of bytes, at least 1", value)
		}
		c.BatchBytes = int32(n)
	case "compression.type":
		codec, err := ParseCompression(v)
		if err != nil {
			return true, err
		}
		c.Compression = codec
	case "enable.idempotence":
		switch strings.ToLower(v) {
		case "true":
			c.Idempotent = true
		case "false":
			c.Idempotent = false
		default:
			return true, invalidf("enable.idempotence %q, want true or false", value)
		}
	case "max.in.flight.requests.per.connection":
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return true, invalidf("max.in.flight.requests.per.connection %q, want at least 1", value)
		}
		c.MaxInFlight = n
	default:
		return false, nil
	}
	return true, nil
}
