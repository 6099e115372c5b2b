package metadata

import "github.com/twmb/franz-go/pkg/kerr"

// createPartitions decides every topic of r against img and returns each
// result in request order and the records that grow the valid ones. New
// partitions get the replication factor of partition 0, placed as
// CreateTopics places them, or on the replicas the request assigns
// (checked as Kafka's controller checks a manual assignment). Internal
// topics do not grow (INVALID_TOPIC_EXCEPTION, as Kafka refuses other
// writes to them; its controller would grow them): a group's
// __consumer_offsets partition is its id's hash modulo the count, so a new
// count would leave committed offsets where no coordinator looks.
func (c *Controller) createPartitions(img *Image, r *CreatePartitionsRequest) (*CreatePartitionsResult, []Record) {
	if addedPartitions(img, r) > MaxPartitionsPerRequest {
		return r.Refused(errTooManyPartitions).(*CreatePartitionsResult), nil
	}
	count := map[string]int{}
	for _, t := range r.Topics {
		count[t.Name]++
	}
	res := &CreatePartitionsResult{Topics: make([]TopicError, 0, len(r.Topics))}
	var recs []Record
	cur := img
	for _, t := range r.Topics {
		var err error
		var rs []Record
		if count[t.Name] > 1 {
			err = apiErr(kerr.InvalidRequest, "Duplicate topic name.")
		} else if rs, err = growRecords(cur, t); err == nil {
			cur, err = dryRun(cur, rs)
		}
		if err == nil {
			recs = append(recs, rs...)
		}
		res.Topics = append(res.Topics, TopicError{Name: t.Name, Error: ErrorOf(err)})
	}
	return res, recs
}

// addedPartitions counts the partitions r would add to the topics of img.
func addedPartitions(img *Image, r *CreatePartitionsRequest) int64 {
	var n int64
	for _, t := range r.Topics {
		if top, ok := img.Topic(t.Name); ok && t.Count > top.NumPartitions() {
			n += int64(t.Count - top.NumPartitions())
		}
	}
	return n
}

// growRecords returns the records that grow topic t.Name to t.Count
// partitions.
func growRecords(img *Image, t PartitionsIncrease) ([]Record, error) {
	top, ok := img.Topic(t.Name)
	if !ok {
		return nil, apiErr(kerr.UnknownTopicOrPartition, "%s", kerr.UnknownTopicOrPartition.Description)
	}
	if top.Internal() {
		return nil, apiErr(kerr.InvalidTopicException, "Cannot add partitions to internal topic %s.", t.Name)
	}
	current := top.NumPartitions()
	switch {
	case t.Count < current:
		return nil, apiErr(kerr.InvalidPartitions, "The topic %s currently has %d partition(s); %d would not be an increase.", t.Name, current, t.Count)
	case t.Count == current:
		return nil, apiErr(kerr.InvalidPartitions, "Topic already has %d partition(s).", current)
	case int64(t.Count-current) > MaxPartitionsPerRequest:
		return nil, errTooManyPartitions
	case !t.Assigned:
		return AddPartitionRecords(img, t.Name, t.Count, nil)
	}
	if add := int(t.Count - current); len(t.Assignments) != add {
		return nil, apiErr(kerr.InvalidReplicaAssignment, "Attempted to add %d additional partition(s), but only %d assignment(s) were specified.", add, len(t.Assignments))
	}
	p0, _ := top.Partition(0)
	return assignedPartitionRecords(img, top.ID(), current, t.Assignments, len(p0.Replicas))
}
