package wire

// DeleteTopics (key 20), versions 1-6.
//
// v1 throttle time. v3 TOPIC_DELETION_DISABLED when delete.topic.enable is
// false (INVALID_REQUEST before v3, as Kafka answers). v4 flexible
// (KIP-482). v5 error messages and quota errors (KIP-599; weir has no
// quotas). v6 topics by name or id (KIP-516). v0 is not advertised (Kafka
// 4.0 removed it, KIP-896).
//
// Internal topics (__consumer_offsets, __transaction_state) are refused
// with INVALID_TOPIC_EXCEPTION, as Kafka refuses produces and DeleteRecords
// on them ("Cannot delete internal topic ..."): Kafka's KRaft controller
// would delete them and every group's committed offsets with them, which
// only its kafka-topics.sh prevents, on the client. weir's metadata log is
// no topic, so asking for it finds nothing. The valid deletions of a request are proposed as
// one batch; timeout_ms bounds the wait for it to apply.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/cluster/metadata"
)

// deleteQuery is one topic a DeleteTopics request names.
type deleteQuery struct {
	name *string
	id   metadata.UUID
}

func (h *BrokerHandler) handleDeleteTopics(ctx context.Context, req *Request) Response {
	r := req.Body.(*kmsg.DeleteTopicsRequest)
	queries := deleteQueries(r)
	if !h.broker.Config().Bool("delete.topic.enable") {
		err := apiErr(kerr.TopicDeletionDisabled, "Topic deletion is disabled.")
		if r.Version < 3 {
			err = apiErr(kerr.InvalidRequest, "Topic deletion is disabled.")
		}
		h.log.Info("delete topics refused", "client", req.ClientID, "reason", "delete.topic.enable=false")
		results := make([]kmsg.DeleteTopicsResponseTopic, len(queries))
		for i, q := range queries {
			results[i] = deleteResult(q.name, q.id, err)
		}
		return Reply(deleteTopicsResponse(r, results))
	}
	return Defer(func(ctx context.Context) Response {
		pctx, cancel := proposeContext(ctx, r.TimeoutMillis)
		defer cancel()
		var results []kmsg.DeleteTopicsResponseTopic
		_, err := h.broker.Propose(pctx, func(img *metadata.Image) ([]metadata.Record, error) {
			var recs []metadata.Record
			results, recs = planDeleteTopics(img, queries)
			return recs, nil
		})
		if err != nil {
			h.log.Info("delete topics not applied", "client", req.ClientID, "err", err)
			if results == nil { // the proposal was never built
				for _, q := range queries {
					results = append(results, deleteResult(q.name, q.id, nil))
				}
			}
			for i := range results {
				if results[i].ErrorCode == 0 {
					results[i] = deleteResult(results[i].Topic, results[i].TopicID, err)
				}
			}
		}
		return Reply(deleteTopicsResponse(r, results))
	})
}

func deleteTopicsResponse(r *kmsg.DeleteTopicsRequest, results []kmsg.DeleteTopicsResponseTopic) *kmsg.DeleteTopicsResponse {
	resp := r.ResponseKind().(*kmsg.DeleteTopicsResponse)
	resp.Topics = results
	if resp.Topics == nil {
		resp.Topics = []kmsg.DeleteTopicsResponseTopic{}
	}
	return resp
}

// deleteQueries lists the topics r names: TopicNames before v6, Topics
// (name or id) from v6.
func deleteQueries(r *kmsg.DeleteTopicsRequest) []deleteQuery {
	var out []deleteQuery
	if r.Version < 6 {
		for _, n := range r.TopicNames {
			out = append(out, deleteQuery{name: &n})
		}
		return out
	}
	for _, t := range r.Topics {
		out = append(out, deleteQuery{name: t.Topic, id: t.TopicID})
	}
	return out
}

// planDeleteTopics decides every named topic against img, with the checks
// of Kafka's controller (a name and an id together, neither, a duplicate),
// and returns each result in request order and the records that delete the
// valid ones.
func planDeleteTopics(img *metadata.Image, queries []deleteQuery) ([]kmsg.DeleteTopicsResponseTopic, []metadata.Record) {
	names, ids := map[string]int{}, map[metadata.UUID]int{}
	for _, q := range queries {
		switch {
		case q.name != nil && q.id.IsZero():
			names[*q.name]++
		case q.name == nil && !q.id.IsZero():
			ids[q.id]++
		}
	}
	results := make([]kmsg.DeleteTopicsResponseTopic, 0, len(queries))
	var recs []metadata.Record
	deleting := map[metadata.UUID]bool{}
	for _, q := range queries {
		t, err := deleteTarget(img, q, names, ids, deleting)
		if err == nil && t.Internal() {
			err = apiErr(kerr.InvalidTopicException, "Cannot delete internal topic %s.", t.Name())
		}
		if err != nil {
			results = append(results, deleteResult(q.name, q.id, err))
			continue
		}
		rs, err := metadata.DeleteTopicRecords(img, t.Name())
		if err != nil {
			results = append(results, deleteResult(q.name, q.id, err))
			continue
		}
		deleting[t.ID()] = true
		recs = append(recs, rs...)
		name := t.Name()
		results = append(results, deleteResult(&name, t.ID(), nil))
	}
	return results, recs
}

// deleteTarget finds the topic q names, or the error Kafka gives it.
func deleteTarget(img *metadata.Image, q deleteQuery, names map[string]int, ids map[metadata.UUID]int, deleting map[metadata.UUID]bool) (*metadata.Topic, error) {
	switch {
	case q.name != nil && !q.id.IsZero():
		return nil, apiErr(kerr.InvalidRequest, "You may not specify both topic name and topic id.")
	case q.name == nil && q.id.IsZero():
		return nil, apiErr(kerr.InvalidRequest, "Neither topic name nor id were specified.")
	case q.name == nil:
		if ids[q.id] > 1 {
			return nil, apiErr(kerr.InvalidRequest, "Duplicate topic id.")
		}
		t, ok := img.TopicByID(q.id)
		if !ok {
			return nil, apiErr(kerr.UnknownTopicID, "%s", kerr.UnknownTopicID.Description)
		}
		if deleting[t.ID()] {
			return nil, apiErr(kerr.InvalidRequest, "The provided topic name maps to an ID that was already supplied.")
		}
		return t, nil
	}
	if names[*q.name] > 1 {
		return nil, apiErr(kerr.InvalidRequest, "Duplicate topic name.")
	}
	t, ok := img.Topic(*q.name)
	if !ok {
		return nil, apiErr(kerr.UnknownTopicOrPartition, "%s", kerr.UnknownTopicOrPartition.Description)
	}
	if deleting[t.ID()] || ids[t.ID()] > 0 {
		return nil, apiErr(kerr.InvalidRequest, "The provided topic name maps to an ID that was already supplied.")
	}
	return t, nil
}

func deleteResult(name *string, id [16]byte, err error) kmsg.DeleteTopicsResponseTopic {
	res := kmsg.NewDeleteTopicsResponseTopic()
	res.Topic, res.TopicID = name, id
	if err != nil {
		ke := adminError(err)
		res.ErrorCode, res.ErrorMessage = ke.Code, &ke.Message
	}
	return res
}
