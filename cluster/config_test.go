package cluster

import (
	"errors"
	"strings"
	"testing"

	"github.com/weirmq/weir/cluster/config"
)

// stockServerProperties is the listener part of Apache Kafka 4's
// config/server.properties (a combined broker and controller), plus
// settings weir accepts without using.
const stockServerProperties = `
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=localhost:9093
listeners=PLAINTEXT://:9092,CONTROLLER://:9093
inter.broker.listener.name=PLAINTEXT
advertised.listeners=PLAINTEXT://localhost:9092,CONTROLLER://localhost:9093
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL
num.network.threads=3
num.io.threads=8
socket.send.buffer.bytes=102400
socket.receive.buffer.bytes=102400
socket.request.max.bytes=104857600
log.dirs=/tmp/kraft-combined-logs
num.partitions=1
num.recovery.threads.per.data.dir=1
offsets.topic.replication.factor=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
log.retention.hours=168
log.segment.bytes=1073741824
log.retention.check.interval.ms=300000
`

// TestStockServerProperties reads Apache Kafka's own server.properties:
// it parses, the settings weir has no use for are listed as ignored, and
// the client listener is the PLAINTEXT one, the controller's skipped.
func TestStockServerProperties(t *testing.T) {
	b, err := config.Parse(strings.NewReader(stockServerProperties))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	want := "controller.quorum.bootstrap.servers,num.io.threads,num.network.threads,num.recovery.threads.per.data.dir," +
		"process.roles,share.coordinator.state.topic.min.isr,share.coordinator.state.topic.replication.factor," +
		"socket.receive.buffer.bytes,socket.send.buffer.bytes,transaction.state.log.min.isr,transaction.state.log.replication.factor"
	if got := strings.Join(b.Ignored(), ","); got != want {
		t.Errorf("ignored %s\nwant    %s", got, want)
	}
	c := NewConfig(b)
	if addr, err := c.listenAddr(); err != nil || addr != ":9092" {
		t.Errorf("listen address %q, %v; want :9092", addr, err)
	}
}

// TestListenerChoice covers the listener rules one by one.
func TestListenerChoice(t *testing.T) {
	cases := []struct {
		props   map[string]string
		want    string // the address, or the error's text
		wantErr bool
	}{
		{map[string]string{"listeners": "PLAINTEXT://127.0.0.1:9092"}, "127.0.0.1:9092", false},
		{map[string]string{"listeners": "127.0.0.1:9092"}, "127.0.0.1:9092", false},
		{map[string]string{"listeners": "CLIENT://:9092,CONTROLLER://:9093", "controller.listener.names": "CONTROLLER",
			"listener.security.protocol.map": "CLIENT:PLAINTEXT,CONTROLLER:PLAINTEXT"}, ":9092", false},
		{map[string]string{"listeners": "PLAINTEXT://:9092,CONTROLLER://:9093"}, "exactly one listener", true},
		{map[string]string{"listeners": "SSL://:9093"}, "only PLAINTEXT", true},
		{map[string]string{"listeners": "CLIENT://:9092"}, "no entry in listener.security.protocol.map", true},
		{map[string]string{"listeners": "CLIENT://:9092", "listener.security.protocol.map": "CLIENT"}, "not NAME:PROTOCOL", true},
	}
	for _, tc := range cases {
		b := config.NewBroker()
		for k, v := range tc.props {
			if err := b.Override(k, v); err != nil {
				t.Fatal(err)
			}
		}
		c := NewConfig(b)
		addr, err := c.listenAddr()
		switch {
		case tc.wantErr && (err == nil || !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: %q, %v; want an error saying %q", tc.props, addr, err, tc.want)
		case !tc.wantErr && (err != nil || addr != tc.want):
			t.Errorf("%v: %q, %v; want %q", tc.props, addr, err, tc.want)
		}
	}
	if _, err := config.Parse(strings.NewReader("no.such.config=1\n")); err == nil {
		t.Error("an unknown config was accepted")
	}
}
