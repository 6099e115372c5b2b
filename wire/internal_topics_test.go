package wire

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/cluster/metadata"
)

// TestInternalTopicAdminRefused checks the admin APIs' refusals on
// internal topics at every version: DeleteTopics by name and by id,
// CreateTopics of each internal name (and of the metadata log's, as Kafka
// answers it), CreatePartitions; and that Metadata does not auto-create
// __transaction_state as a plain topic.
func TestInternalTopicAdminRefused(t *testing.T) {
	s, b := startBroker(t, map[string]string{"auto.create.topics.enable": "true"})
	c := dial(t, s)
	offsets := newTopic(t, b, metadata.ConsumerOffsetsTopic, 3)
	for v := int16(1); v <= 6; v++ {
		req := kmsg.NewPtrDeleteTopicsRequest()
		req.Version, req.TimeoutMillis = v, 5000
		req.TopicNames = []string{metadata.ConsumerOffsetsTopic}
		if v >= 6 {
			byID := kmsg.NewDeleteTopicsRequestTopic()
			byID.TopicID = offsets.ID()
			req.Topics = []kmsg.DeleteTopicsRequestTopic{byID}
		}
		resp := roundTrip[*kmsg.DeleteTopicsResponse](c, req)
		wantCode(t, "delete internal", resp.Topics[0].ErrorCode, kerr.InvalidTopicException)
		if v >= 5 && deref(resp.Topics[0].ErrorMessage) != "Cannot delete internal topic __consumer_offsets." {
			t.Errorf("v%d message %v", v, resp.Topics[0].ErrorMessage)
		}
	}
	for v := int16(0); v <= 7; v++ {
		req := createTopicsReq(v, v%2 == 1)
		for _, name := range []string{metadata.ConsumerOffsetsTopic, metadata.TransactionStateTopic, metadata.MetadataTopic} {
			req.Topics = append(req.Topics, plainTopic(name, 1, 1))
		}
		resp := roundTrip[*kmsg.CreateTopicsResponse](c, req)
		for _, rt := range resp.Topics {
			wantCode(t, "create "+rt.Topic, rt.ErrorCode, kerr.InvalidRequest)
			if want := "Creation of internal topic " + rt.Topic + " is prohibited."; v >= 1 && deref(rt.ErrorMessage) != want {
				t.Errorf("v%d %s: message %v", v, rt.Topic, rt.ErrorMessage)
			}
		}
	}
	grow := kmsg.NewPtrCreatePartitionsRequest()
	grow.TimeoutMillis = 5000
	gt := kmsg.NewCreatePartitionsRequestTopic()
	gt.Topic, gt.Count = metadata.ConsumerOffsetsTopic, 10
	grow.Topics = []kmsg.CreatePartitionsRequestTopic{gt}
	gresp := roundTrip[*kmsg.CreatePartitionsResponse](c, grow)
	wantCode(t, "grow internal", gresp.Topics[0].ErrorCode, kerr.InvalidTopicException)

	md := metadataReq(12)
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(metadata.TransactionStateTopic)
	md.Topics, md.AllowAutoTopicCreation = []kmsg.MetadataRequestTopic{mt}, true
	mresp := roundTrip[*kmsg.MetadataResponse](c, md)
	wantCode(t, "metadata "+metadata.TransactionStateTopic, mresp.Topics[0].ErrorCode, kerr.UnknownTopicOrPartition)

	img := b.Image()
	if top, ok := img.Topic(metadata.ConsumerOffsetsTopic); !ok || top.NumPartitions() != 3 {
		t.Error("__consumer_offsets deleted or changed")
	}
	for _, name := range []string{metadata.TransactionStateTopic, metadata.MetadataTopic} {
		if _, ok := img.Topic(name); ok {
			t.Errorf("%s created", name)
		}
	}
}
