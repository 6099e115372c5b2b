package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestInternalTopicsRefused checks with a real weir serve that deleting,
// creating or growing __consumer_offsets, and creating
// __transaction_state, are refused through raw requests and through
// `weir topics`, and that a group's committed offsets survive every
// attempt.
func TestInternalTopicsRefused(t *testing.T) {
	addr := startServe(t, "--data", t.TempDir(), "--listen", "127.0.0.1:0").Stdout()
	addr = strings.Fields(addr[strings.Index(addr, " on ")+4:])[0]
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := newTestClient(t, addr)
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "orders"); err != nil {
		t.Fatal(err)
	}
	offsets := kadm.Offsets{}
	offsets.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 7})
	if err := adm.CommitAllOffsets(ctx, "kept", offsets); err != nil {
		t.Fatalf("commit: %v", err)
	}

	del := kmsg.NewPtrDeleteTopicsRequest()
	del.TopicNames = []string{"__consumer_offsets"}
	delTopic := kmsg.NewDeleteTopicsRequestTopic()
	delTopic.Topic = kmsg.StringPtr("__consumer_offsets")
	del.Topics = []kmsg.DeleteTopicsRequestTopic{delTopic}
	dresp, err := del.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if r := dresp.Topics[0]; r.ErrorCode != kerr.InvalidTopicException.Code || r.ErrorMessage == nil ||
		*r.ErrorMessage != "Cannot delete internal topic __consumer_offsets." {
		t.Errorf("raw DeleteTopics: code %d message %v", r.ErrorCode, r.ErrorMessage)
	}
	create := kmsg.NewPtrCreateTopicsRequest()
	create.TimeoutMillis = 5000
	for _, name := range []string{"__consumer_offsets", "__transaction_state"} {
		ct := kmsg.NewCreateTopicsRequestTopic()
		ct.Topic, ct.NumPartitions, ct.ReplicationFactor = name, 3, 1
		create.Topics = append(create.Topics, ct)
	}
	cresp, err := create.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range cresp.Topics {
		if want := "Creation of internal topic " + r.Topic + " is prohibited."; r.ErrorCode != kerr.InvalidRequest.Code ||
			r.ErrorMessage == nil || *r.ErrorMessage != want {
			t.Errorf("raw CreateTopics %s: code %d message %v", r.Topic, r.ErrorCode, r.ErrorMessage)
		}
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"delete", "--topic", "__consumer_offsets"}, `weir topics: delete topic "__consumer_offsets": INVALID_TOPIC_EXCEPTION: `},
		{[]string{"create", "--topic", "__consumer_offsets", "--partitions", "3"}, `weir topics: create topic "__consumer_offsets": INVALID_REQUEST: `},
		{[]string{"create", "--topic", "__transaction_state"}, `weir topics: create topic "__transaction_state": INVALID_REQUEST: `},
	} {
		args := append(append([]string{"topics"}, c.args...), "--brokers", addr)
		code, stdout, stderr := runCmd(t, args...)
		if code != 1 || stdout != "" || !strings.HasPrefix(stderr, c.want) {
			t.Errorf("weir %s: exit %d, stdout %q, stderr %q; want 1 and %q...", strings.Join(args, " "), code, stdout, stderr, c.want)
		}
	}
	grow, err := adm.UpdatePartitions(ctx, 60, "__consumer_offsets")
	if err != nil {
		t.Fatal(err)
	}
	if r := grow["__consumer_offsets"]; !errors.Is(r.Err, kerr.InvalidTopicException) ||
		r.ErrMessage != "Cannot add partitions to internal topic __consumer_offsets." {
		t.Errorf("growing __consumer_offsets: %v (%q)", r.Err, r.ErrMessage)
	}

	topics, err := adm.ListTopicsWithInternal(ctx, "__consumer_offsets", "__transaction_state")
	if err != nil {
		t.Fatal(err)
	}
	if d := topics["__consumer_offsets"]; d.Err != nil || len(d.Partitions) != 50 {
		t.Errorf("__consumer_offsets: %v, %d partitions", d.Err, len(d.Partitions))
	}
	if d, ok := topics["__transaction_state"]; ok && d.Err == nil {
		t.Errorf("__transaction_state exists: %d partitions", len(d.Partitions))
	}
	got, err := adm.FetchOffsets(ctx, "kept")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := got.Lookup("orders", 0); !ok || o.Err != nil || o.At != 7 {
		t.Errorf("committed offset after the attempts: %+v ok=%v", o, ok)
	}
}
