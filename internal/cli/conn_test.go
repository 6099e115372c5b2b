package cli

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

func TestBrokersFromFlagEnvOrDefault(t *testing.T) {
	for _, tc := range []struct {
		env  string
		args []string
		want string
	}{
		{"", nil, DefaultBroker},
		{"h1:1,h2:2", nil, "h1:1 h2:2"},
		{"h1:1", []string{"--bootstrap-server", "b:9"}, "b:9"},
		{"h1:1", []string{"--brokers", "c:9, d:9"}, "c:9 d:9"},
	} {
		t.Setenv(BrokersEnv, tc.env)
		fs := NewFlagSet("x", "", &bytes.Buffer{})
		c := AddConnFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		seeds, err := c.Seeds()
		if err != nil || strings.Join(seeds, " ") != tc.want {
			t.Errorf("env %q args %q: seeds %q, %v; want %q", tc.env, tc.args, seeds, err, tc.want)
		}
	}
}

func TestConnRejectsEmptyAddress(t *testing.T) {
	var stderr bytes.Buffer
	fs := NewFlagSet("x", "", &stderr)
	c := AddConnFlags(fs)
	if err := fs.Parse([]string{"--bootstrap-server", "a:1,,b:2"}); err != nil {
		t.Fatal(err)
	}
	var uerr *UsageError
	if _, err := c.Client(); !errors.As(err, &uerr) || !strings.Contains(stderr.String(), "empty address") {
		t.Errorf("Client() = %v, stderr %q; want a usage error naming the empty address", err, stderr.String())
	}
}

func TestExplainShardErrors(t *testing.T) {
	inner := kerr.CoordinatorNotAvailable
	err := &kadm.ShardErrors{Name: "ListGroups", Errs: []kadm.ShardError{
		{Err: inner, Broker: kadm.BrokerDetail{NodeID: 3, Host: "10.0.0.1", Port: 9092}},
		{Err: inner, Broker: kadm.BrokerDetail{NodeID: 4, Host: "10.0.0.2", Port: 9092}},
	}}
	got := Explain(err)
	msg := got.Error()
	if strings.Contains(msg, "shard") || !strings.Contains(msg, "broker 3 (10.0.0.1:9092): COORDINATOR_NOT_AVAILABLE") || !strings.Contains(msg, "1 more") {
		t.Errorf("Explain = %q", msg)
	}
	if !errors.Is(got, kerr.CoordinatorNotAvailable) {
		t.Errorf("Explain lost the error code: %v", got)
	}
}

func TestExplainRefusedConnection(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, err = net.Dial("tcp", addr)
	if err == nil {
		t.Skip("nothing refused the connection")
	}
	msg := Explain(err).Error()
	if !strings.Contains(msg, "no broker is listening at "+addr) || !strings.Contains(msg, "WEIR_BROKERS") {
		t.Errorf("Explain = %q", msg)
	}
}

func TestAdminExplainsTimeout(t *testing.T) {
	fs := NewFlagSet("x", "", &bytes.Buffer{})
	c := AddConnFlags(fs)
	if err := fs.Parse([]string{"--bootstrap-server", "127.0.0.1:1", "--timeout", "50ms"}); err != nil {
		t.Fatal(err)
	}
	adm, ctx, err := c.Admin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	<-ctx.Done()
	msg := adm.Explain(ctx, "list topics", ctx.Err()).Error()
	if !strings.Contains(msg, "list topics: no answer from 127.0.0.1:1 within 50ms") || !strings.Contains(msg, "--bootstrap-server") {
		t.Errorf("Explain = %q", msg)
	}
	if adm.Timeout() != 50*time.Millisecond {
		t.Errorf("Timeout = %v", adm.Timeout())
	}
}

func TestOutputFormats(t *testing.T) {
	var stderr, out bytes.Buffer
	fs := NewFlagSet("x", "", &stderr)
	o := AddFormatFlag(fs)
	if err := fs.Parse([]string{"--format", "json"}); err != nil {
		t.Fatal(err)
	}
	v := struct {
		Name string `json:"name"`
		N    int    `json:"n"`
	}{"a", 2}
	if err := o.Write(&out, v, nil); err != nil || out.String() != "{\n  \"name\": \"a\",\n  \"n\": 2\n}\n" {
		t.Errorf("json: %q, %v", out.String(), err)
	}
	fs = NewFlagSet("x", "", &stderr)
	AddFormatFlag(fs)
	var uerr *UsageError
	if err := fs.Parse([]string{"--format", "jsno"}); !errors.As(err, &uerr) || !strings.Contains(stderr.String(), "did you mean json?") {
		t.Errorf("Parse of a --format typo = %v, %q", err, stderr.String())
	}
}
