package cluster

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/cluster/metadata"
	"github.com/weirmq/weir/log"
)

// longTopicName is a valid topic name of 249 characters (Kafka's maximum)
// ending in i.
func longTopicName(prefix string, i int) string {
	s := fmt.Sprintf("%s-%d-", prefix, i)
	return s + strings.Repeat("x", 249-len(s))
}

// createOneTopic creates a normal topic through CreateTopics and fails the
// test unless it is created.
func createOneTopic(ctx context.Context, t *testing.T, cl *kgo.Client, name string) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 30000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, 1, 1
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	if code := resp.Topics[0].ErrorCode; code != 0 {
		t.Fatalf("create %s: %v (%s)", name, kerr.ErrorForCode(code), deref(resp.Topics[0].ErrorMessage))
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// TestOversizedAutoCreateIsSplit sends one Metadata request naming 30,000
// unknown topics of 249-character names (one raft entry of about 9 MB,
// over the metadata log's 8 MiB segment, used to stop the quorum for
// good): it creates at most one bounded operation's worth of topics,
// answers the rest LEADER_NOT_AVAILABLE, and CreateTopics still works.
func TestOversizedAutoCreateIsSplit(t *testing.T) {
	n, sys := startTestNode(t, map[string]string{"log.dirs": "/data", "listeners": "PLAINTEXT://127.0.0.1:0",
		"log.index.size.max.bytes": "4096"}, log.NewMemFS())
	defer stopNode(t, n, sys)
	cl, err := kgo.NewClient(kgo.SeedBrokers(n.Addr().String()), kgo.RequestTimeoutOverhead(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	const asked = 30000
	req := kmsg.NewPtrMetadataRequest()
	req.AllowAutoTopicCreation = true
	for i := range asked {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(longTopicName("auto", i))
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	created, pending := 0, 0
	for _, rt := range resp.Topics {
		switch rt.ErrorCode {
		case 0:
			created++
		case kerr.LeaderNotAvailable.Code:
			pending++
		default:
			t.Fatalf("topic %s: %v", deref(rt.Topic), kerr.ErrorForCode(rt.ErrorCode))
		}
	}
	if created+pending != asked || pending == 0 || created*2 > metadata.MaxRecordsPerOp {
		t.Fatalf("created %d, pending %d of %d: want a bounded first operation", created, pending, asked)
	}
	if got := n.Image().NumTopics(); got*2 > metadata.MaxRecordsPerOp {
		t.Fatalf("%d topics exist after one request", got)
	}
	createOneTopic(ctx, t, cl, "after-auto-create")
}

// TestOversizedCreateTopicsRefused sends one CreateTopics of 10,000 topics
// (the partition cap) with 249-character names and three configs each,
// which used to make one 23 MB raft entry that stopped the quorum: every
// topic is refused with POLICY_VIOLATION as Kafka's controller refuses an
// operation over MAX_RECORDS_PER_USER_OP, nothing is created, and a normal
// CreateTopics works afterwards.
func TestOversizedCreateTopicsRefused(t *testing.T) {
	n, sys := startTestNode(t, map[string]string{"log.dirs": "/data", "listeners": "PLAINTEXT://127.0.0.1:0",
		"log.index.size.max.bytes": "4096"}, log.NewMemFS())
	defer stopNode(t, n, sys)
	cl, err := kgo.NewClient(kgo.SeedBrokers(n.Addr().String()), kgo.RequestTimeoutOverhead(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 60000
	for i := range 10000 {
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = longTopicName("big", i), 1, 1
		for _, c := range [][2]string{{"retention.ms", "86400000"}, {"cleanup.policy", "delete"}, {"max.message.bytes", "1048588"}} {
			rc := kmsg.NewCreateTopicsRequestTopicConfig()
			rc.Name, rc.Value = c[0], kmsg.StringPtr(c[1])
			rt.Configs = append(rt.Configs, rc)
		}
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range resp.Topics {
		if rt.ErrorCode != kerr.PolicyViolation.Code || deref(rt.ErrorMessage) != "Unable to perform excessively large batch operation." {
			t.Fatalf("topic %s: %v (%s), want POLICY_VIOLATION", rt.Topic, kerr.ErrorForCode(rt.ErrorCode), deref(rt.ErrorMessage))
		}
	}
	if got := n.Image().NumTopics(); got != 0 {
		t.Fatalf("%d topics created by a refused request", got)
	}
	createOneTopic(ctx, t, cl, "after-create-topics")
}
