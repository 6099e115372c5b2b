package cluster

import (
	"context"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/weirmq/weir/cluster/metadata"
)

// The metadata actor answers typed requests with typed results: a
// validate_only creation is decided and writes nothing, a real one is in
// the image when Metadata returns, the node's producer ids come from a
// block in the log, and a stopped node refuses at once.
func TestNodeControllerRequests(t *testing.T) {
	n, sys := testNode(t, t.TempDir(), nil)
	ctx := context.Background()
	create := func(validate bool) *metadata.CreatedTopic {
		t.Helper()
		res, err := n.Metadata(ctx, &metadata.CreateTopicsRequest{ValidateOnly: validate,
			Topics: []metadata.CreatableTopic{{Name: "typed", NumPartitions: 2, ReplicationFactor: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		return &res.(*metadata.CreateTopicsResult).Topics[0]
	}
	before := n.Image().Offset()
	if ct := create(true); ct.Error.Failed() || ct.NumPartitions != 2 {
		t.Fatalf("validate only: %+v", ct)
	}
	if _, ok := n.Image().Topic("typed"); ok || n.Image().Offset() != before {
		t.Fatal("validate_only wrote")
	}
	ct := create(false)
	top, ok := n.Image().Topic("typed")
	if ct.Error.Failed() || !ok || top.ID() != ct.TopicID {
		t.Fatalf("created %+v, in image %v", ct, ok)
	}
	if again := create(false); again.Error.Code != kerr.TopicAlreadyExists.Code {
		t.Fatalf("second create: %+v", again)
	}
	id, err := n.ProducerID(ctx)
	if err != nil || id != 0 || n.Image().NextProducerID() != metadata.DefaultProducerIDBlockSize {
		t.Fatalf("producer id %d, %v, next in the image %d", id, err, n.Image().NextProducerID())
	}
	stopNode(t, n, sys)
	if _, err := n.Metadata(ctx, &metadata.AutoCreateTopicsRequest{Names: []string{"x"}}); !errors.Is(err, ErrStopped) {
		t.Fatalf("after stop: %v", err)
	}
}
