package perf

import (
	"errors"
	"testing"
	"time"
)

func TestSetProperty(t *testing.T) {
	c := DefaultProducerConfig()
	for _, p := range [][2]string{
		{"bootstrap.servers", "a:1, b:2"}, {"acks", "1"}, {"linger.ms", "7"}, {"batch.size", "16384"},
		{"compression.type", "zstd"}, {"enable.idempotence", "FALSE"}, {"max.in.flight.requests.per.connection", "3"},
	} {
		if used, err := c.SetProperty(p[0], p[1]); !used || err != nil {
			t.Errorf("SetProperty(%s=%s) = %v, %v", p[0], p[1], used, err)
		}
	}
	if len(c.Brokers) != 2 || c.Brokers[1] != "b:2" || c.Acks != AcksLeader || c.Linger != 7*time.Millisecond ||
		c.BatchBytes != 16384 || c.Compression != CompressionZstd || c.Idempotent || c.MaxInFlight != 3 {
		t.Errorf("config after the properties: %+v", c)
	}
	if used, err := c.SetProperty("buffer.memory", "33554432"); used || err != nil {
		t.Errorf("SetProperty(buffer.memory) = %v, %v; want unused, no error", used, err)
	}
	for _, p := range [][2]string{
		{"acks", "2"}, {"linger.ms", "-1"}, {"linger.ms", "5ms"}, {"batch.size", "0"}, {"compression.type", "brotli"},
		{"enable.idempotence", "yes"}, {"max.in.flight.requests.per.connection", "0"}, {"bootstrap.servers", "a:1,"},
	} {
		if _, err := c.SetProperty(p[0], p[1]); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("SetProperty(%s=%s) = %v, want ErrInvalidConfig", p[0], p[1], err)
		}
	}
}
