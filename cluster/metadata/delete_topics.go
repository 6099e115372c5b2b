package metadata

import "github.com/twmb/franz-go/pkg/kerr"

// deleteTopics decides every named topic against img, with the checks of
// Kafka's controller (a name and an id together, neither, a duplicate),
// and returns each result in request order and the records that delete
// the valid ones. delete.topic.enable=false refuses every topic with
// TOPIC_DELETION_DISABLED (the wire answers INVALID_REQUEST before
// DeleteTopics v3, as Kafka does). Internal topics (__consumer_offsets,
// __transaction_state) are refused with INVALID_TOPIC_EXCEPTION, as Kafka
// refuses produces and DeleteRecords on them: Kafka's KRaft controller
// would delete them and every group's committed offsets with them, which
// only its kafka-topics.sh prevents, on the client.
func (c *Controller) deleteTopics(img *Image, r *DeleteTopicsRequest) (*DeleteTopicsResult, []Record) {
	if !c.Config.Bool("delete.topic.enable") {
		return r.Refused(apiErr(kerr.TopicDeletionDisabled, "Topic deletion is disabled.")).(*DeleteTopicsResult), nil
	}
	names, ids := map[string]int{}, map[UUID]int{}
	for _, q := range r.Topics {
		switch {
		case q.Name != nil && q.ID.IsZero():
			names[*q.Name]++
		case q.Name == nil && !q.ID.IsZero():
			ids[q.ID]++
		}
	}
	res := &DeleteTopicsResult{Topics: make([]DeletedTopic, 0, len(r.Topics))}
	var recs []Record
	deleting := map[UUID]bool{}
	for _, q := range r.Topics {
		t, err := deleteTarget(img, q, names, ids, deleting)
		if err == nil && t.Internal() {
			err = apiErr(kerr.InvalidTopicException, "Cannot delete internal topic %s.", t.Name())
		}
		var rs []Record
		if err == nil {
			rs, err = DeleteTopicRecords(img, t.Name())
		}
		if err != nil {
			res.Topics = append(res.Topics, DeletedTopic{Name: q.Name, ID: q.ID, Error: ErrorOf(err)})
			continue
		}
		deleting[t.ID()] = true
		recs = append(recs, rs...)
		name := t.Name()
		res.Topics = append(res.Topics, DeletedTopic{Name: &name, ID: t.ID()})
	}
	return res, recs
}

// deleteTarget finds the topic q names, or the error Kafka gives it.
func deleteTarget(img *Image, q TopicRef, names map[string]int, ids map[UUID]int, deleting map[UUID]bool) (*Topic, error) {
	switch {
	case q.Name != nil && !q.ID.IsZero():
		return nil, apiErr(kerr.InvalidRequest, "You may not specify both topic name and topic id.")
	case q.Name == nil && q.ID.IsZero():
		return nil, apiErr(kerr.InvalidRequest, "Neither topic name nor id were specified.")
	case q.Name == nil:
		if ids[q.ID] > 1 {
			return nil, apiErr(kerr.InvalidRequest, "Duplicate topic id.")
		}
		t, ok := img.TopicByID(q.ID)
		if !ok {
			return nil, apiErr(kerr.UnknownTopicID, "%s", kerr.UnknownTopicID.Description)
		}
		if deleting[t.ID()] {
			return nil, apiErr(kerr.InvalidRequest, "The provided topic name maps to an ID that was already supplied.")
		}
		return t, nil
	}
	if names[*q.Name] > 1 {
		return nil, apiErr(kerr.InvalidRequest, "Duplicate topic name.")
	}
	t, ok := img.Topic(*q.Name)
	if !ok {
		return nil, apiErr(kerr.UnknownTopicOrPartition, "%s", kerr.UnknownTopicOrPartition.Description)
	}
	if deleting[t.ID()] || ids[t.ID()] > 0 {
		return nil, apiErr(kerr.InvalidRequest, "The provided topic name maps to an ID that was already supplied.")
	}
	return t, nil
}
