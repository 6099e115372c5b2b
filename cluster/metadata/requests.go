package metadata

// Requests are the metadata changes a node asks the controller (the
// metadata quorum's leader) for, and Results its answers. Both are plain
// data, msgpack-friendly (no functions, channels or interfaces inside), so
// that a request built on one node is decided on another: the controller
// validates it against its own latest image (Controller.Evaluate) and
// answers each item with a Kafka error code and message. EncodeRequest and
// EncodeResult give their bytes (request_codec.go).

// Request is one metadata change asked of the controller: one of the
// *...Request types of this package (a closed set).
type Request interface {
	kind() requestKind
	// Refused is the answer to the whole request refused with e (the
	// controller cannot write, it stopped, the wait for it ended): every
	// item of the request fails with e, in request order.
	Refused(e APIError) Result
}

// Result is the controller's answer to a Request: the *...Result type of
// the same name.
type Result interface {
	kind() requestKind
	// Fail turns every item that succeeded into e: the batch that would
	// have made them did not apply. Items that failed keep their errors.
	Fail(e APIError)
}

// requestKind tags a request and its result in their encoding.
type requestKind uint8

// The request kinds. Tags are never reused. Kinds 1-6 serve Kafka
// requests of clients; 7-10 are the brokers' own (registration,
// heartbeats, leader elections, ISR changes), built on the record builders
// of proposals.go and isr.go, each kind's types in its own file.
const (
	kindCreateTopics        requestKind = 1
	kindCreatePartitions    requestKind = 2
	kindDeleteTopics        requestKind = 3
	kindAlterConfigs        requestKind = 4
	kindAutoCreateTopics    requestKind = 5
	kindAllocateProducerIDs requestKind = 6
	kindRegisterBroker      requestKind = 7
	kindBrokerHeartbeat     requestKind = 8
	kindElectLeaders        requestKind = 9
	kindAlterPartition      requestKind = 10
	kindMoveLeaders         requestKind = 11
)

// CreateTopicsRequest creates topics (Kafka's CreateTopics). The valid
// topics are created in one batch; ValidateOnly decides them without
// creating any.
type CreateTopicsRequest struct {
	_msgpack     struct{} `msgpack:",as_array"`
	Topics       []CreatableTopic
	ValidateOnly bool
}

// CreatableTopic is one topic of a CreateTopicsRequest, as the client
// asked for it.
type CreatableTopic struct {
	_msgpack struct{} `msgpack:",as_array"`
	Name     string
	// NumPartitions and ReplicationFactor are -1 for the controller's
	// defaults (num.partitions, default.replication.factor), and -1 both
	// when Assignments place the partitions.
	NumPartitions     int32
	ReplicationFactor int16
	// Assignments place partitions by hand: one per partition, numbered
	// 0..n-1 once each.
	Assignments []ReplicaAssignment
	// Configs are the topic's config overrides; a nil Value is refused.
	// The last of a repeated name wins.
	Configs []ConfigValue
}

// ReplicaAssignment is the replica list a request gives one partition.
type ReplicaAssignment struct {
	_msgpack  struct{} `msgpack:",as_array"`
	Partition int32
	Replicas  []int32
}

// ConfigValue is one config name and value of a request; Value is nil
// when the client sent null.
type ConfigValue struct {
	_msgpack struct{} `msgpack:",as_array"`
	Name     string
	Value    *string
}

// CreateTopicsResult answers a CreateTopicsRequest: one entry per topic,
// in request order.
type CreateTopicsResult struct {
	_msgpack struct{} `msgpack:",as_array"`
	Topics   []CreatedTopic
}

// CreatedTopic is the outcome of one topic. The fields past Error are set
// only for a created (or, with ValidateOnly, creatable) topic.
type CreatedTopic struct {
	_msgpack          struct{} `msgpack:",as_array"`
	Name              string
	Error             APIError
	TopicID           UUID
	NumPartitions     int32
	ReplicationFactor int16
	// Configs are every topic config's effective value for the new
	// topic; ConfigErrorCode is set instead when they cannot be resolved.
	Configs         []CreatedTopicConfig
	ConfigErrorCode int16
}

// CreatedTopicConfig is one config of a created topic, as CreateTopics v5+
// reports it.
type CreatedTopicConfig struct {
	_msgpack struct{} `msgpack:",as_array"`
	Name     string
	// Value is nil when the config has none or is sensitive.
	Value     *string
	ReadOnly  bool
	Source    int8 // Kafka's ConfigSource
	Sensitive bool
}

// CreatePartitionsRequest grows topics (Kafka's CreatePartitions).
type CreatePartitionsRequest struct {
	_msgpack     struct{} `msgpack:",as_array"`
	Topics       []PartitionsIncrease
	ValidateOnly bool
}

// PartitionsIncrease grows one topic to Count partitions. With Assigned,
// Assignments gives each new partition's replicas in order; otherwise
// they are placed as CreateTopics places them.
type PartitionsIncrease struct {
	_msgpack    struct{} `msgpack:",as_array"`
	Name        string
	Count       int32
	Assigned    bool
	Assignments [][]int32
}

// CreatePartitionsResult answers a CreatePartitionsRequest: one entry per
// topic, in request order.
type CreatePartitionsResult struct {
	_msgpack struct{} `msgpack:",as_array"`
	Topics   []TopicError
}

// TopicError is the outcome of one topic of a request.
type TopicError struct {
	_msgpack struct{} `msgpack:",as_array"`
	Name     string
	Error    APIError
}

// DeleteTopicsRequest deletes topics by name or by id (Kafka's
// DeleteTopics).
type DeleteTopicsRequest struct {
	_msgpack struct{} `msgpack:",as_array"`
	Topics   []TopicRef
}

// TopicRef names a topic by name (ID zero) or by id (Name nil); a request
// that gives both or neither is refused.
type TopicRef struct {
	_msgpack struct{} `msgpack:",as_array"`
	Name     *string
	ID       UUID
}

// DeleteTopicsResult answers a DeleteTopicsRequest: one entry per topic,
// in request order, naming a deleted topic by both name and id.
type DeleteTopicsResult struct {
	_msgpack struct{} `msgpack:",as_array"`
	Topics   []DeletedTopic
}

// DeletedTopic is the outcome of one topic of a DeleteTopicsRequest.
type DeletedTopic struct {
	_msgpack struct{} `msgpack:",as_array"`
	Name     *string
	ID       UUID
	Error    APIError
}

// AlterConfigsRequest changes config overrides (Kafka's AlterConfigs and,
// with Incremental, IncrementalAlterConfigs). The valid resources change
// in one batch; ValidateOnly decides them without changing any.
type AlterConfigsRequest struct {
	_msgpack struct{} `msgpack:",as_array"`
	// Node is the broker the client sent the request to: a broker
	// resource may name it, or "" for the cluster default.
	Node         int32
	Incremental  bool
	ValidateOnly bool
	Resources    []AlterConfigsResource
}

// AlterConfigsResource is one resource of an AlterConfigsRequest.
type AlterConfigsResource struct {
	_msgpack struct{} `msgpack:",as_array"`
	Type     int8     // Kafka's ConfigResourceType: 2 topic, 4 broker
	Name     string
	Configs  []ConfigChange
}

// ConfigChange is one config of an AlterConfigsResource. Without
// Incremental the resource's changes are its new overrides (Op unused);
// with it, Op is Kafka's SET (0), DELETE (1), APPEND (2) or SUBTRACT (3).
type ConfigChange struct {
	_msgpack struct{} `msgpack:",as_array"`
	Name     string
	Op       int8
	Value    *string
}

// The IncrementalAlterConfigs operations.
const (
	OpSet      int8 = 0
	OpDelete   int8 = 1
	OpAppend   int8 = 2
	OpSubtract int8 = 3
)

// AlterConfigsResult answers an AlterConfigsRequest: one entry per
// resource, in request order.
type AlterConfigsResult struct {
	_msgpack  struct{} `msgpack:",as_array"`
	Resources []ResourceError
}

// ResourceError is the outcome of one config resource.
type ResourceError struct {
	_msgpack struct{} `msgpack:",as_array"`
	Type     int8
	Name     string
	Error    APIError
}

// AutoCreateTopicsRequest creates topics a Metadata request named and
// found missing, with the controller's defaults for them (Kafka's
// AutoTopicCreationManager): offsets.topic.* for __consumer_offsets,
// num.partitions and default.replication.factor for the others.
type AutoCreateTopicsRequest struct {
	_msgpack struct{} `msgpack:",as_array"`
	Names    []string
}

// AutoCreateTopicsResult answers an AutoCreateTopicsRequest: one entry per
// name, in request order. No error: the topic exists (created now or
// before). LEADER_NOT_AVAILABLE: it was not created now (one operation
// holds a bounded number of records, or the batch did not apply); the
// client's retry creates it. Any other code: it is refused.
type AutoCreateTopicsResult struct {
	_msgpack struct{} `msgpack:",as_array"`
	Topics   []TopicError
}

// AllocateProducerIDsRequest asks for a block of producer ids for a
// broker (Kafka's AllocateProducerIds): the controller gives the next
// DefaultProducerIDBlockSize ids of the cluster, so no two brokers ever
// hand out the same id.
type AllocateProducerIDsRequest struct {
	_msgpack    struct{} `msgpack:",as_array"`
	BrokerID    int32
	BrokerEpoch int64
}

// AllocateProducerIDsResult answers an AllocateProducerIDsRequest: ids
// FirstProducerID .. FirstProducerID+Size-1, unless Error.
type AllocateProducerIDsResult struct {
	_msgpack        struct{} `msgpack:",as_array"`
	Error           APIError
	FirstProducerID int64
	Size            int64
}

func (*CreateTopicsRequest) kind() requestKind        { return kindCreateTopics }
func (*CreatePartitionsRequest) kind() requestKind    { return kindCreatePartitions }
func (*DeleteTopicsRequest) kind() requestKind        { return kindDeleteTopics }
func (*AlterConfigsRequest) kind() requestKind        { return kindAlterConfigs }
func (*AutoCreateTopicsRequest) kind() requestKind    { return kindAutoCreateTopics }
func (*AllocateProducerIDsRequest) kind() requestKind { return kindAllocateProducerIDs }
func (*CreateTopicsResult) kind() requestKind         { return kindCreateTopics }
func (*CreatePartitionsResult) kind() requestKind     { return kindCreatePartitions }
func (*DeleteTopicsResult) kind() requestKind         { return kindDeleteTopics }
func (*AlterConfigsResult) kind() requestKind         { return kindAlterConfigs }
func (*AutoCreateTopicsResult) kind() requestKind     { return kindAutoCreateTopics }
func (*AllocateProducerIDsResult) kind() requestKind  { return kindAllocateProducerIDs }

// Refused implements Request.
func (r *CreateTopicsRequest) Refused(e APIError) Result {
	out := &CreateTopicsResult{Topics: make([]CreatedTopic, len(r.Topics))}
	for i, t := range r.Topics {
		out.Topics[i] = CreatedTopic{Name: t.Name, Error: e}
	}
	return out
}

// Refused implements Request.
func (r *CreatePartitionsRequest) Refused(e APIError) Result {
	out := &CreatePartitionsResult{Topics: make([]TopicError, len(r.Topics))}
	for i, t := range r.Topics {
		out.Topics[i] = TopicError{Name: t.Name, Error: e}
	}
	return out
}

// Refused implements Request.
func (r *DeleteTopicsRequest) Refused(e APIError) Result {
	out := &DeleteTopicsResult{Topics: make([]DeletedTopic, len(r.Topics))}
	for i, t := range r.Topics {
		out.Topics[i] = DeletedTopic{Name: t.Name, ID: t.ID, Error: e}
	}
	return out
}

// Refused implements Request.
func (r *AlterConfigsRequest) Refused(e APIError) Result {
	out := &AlterConfigsResult{Resources: make([]ResourceError, len(r.Resources))}
	for i, res := range r.Resources {
		out.Resources[i] = ResourceError{Type: res.Type, Name: res.Name, Error: e}
	}
	return out
}

// Refused implements Request: every topic is LEADER_NOT_AVAILABLE with
// e's message, for the client's retry.
func (r *AutoCreateTopicsRequest) Refused(e APIError) Result {
	out := &AutoCreateTopicsResult{Topics: make([]TopicError, len(r.Names))}
	for i, n := range r.Names {
		out.Topics[i] = TopicError{Name: n, Error: notCreated(e)}
	}
	return out
}

// Refused implements Request.
func (r *AllocateProducerIDsRequest) Refused(e APIError) Result {
	return &AllocateProducerIDsResult{Error: e}
}

// Fail implements Result: a failed topic loses the fields of a created
// one.
func (r *CreateTopicsResult) Fail(e APIError) {
	for i, t := range r.Topics {
		if !t.Error.Failed() {
			r.Topics[i] = CreatedTopic{Name: t.Name, Error: e}
		}
	}
}

// Fail implements Result.
func (r *CreatePartitionsResult) Fail(e APIError) { failTopics(r.Topics, e) }

// Fail implements Result.
func (r *DeleteTopicsResult) Fail(e APIError) {
	for i := range r.Topics {
		if !r.Topics[i].Error.Failed() {
			r.Topics[i].Error = e
		}
	}
}

// Fail implements Result.
func (r *AlterConfigsResult) Fail(e APIError) {
	for i := range r.Resources {
		if !r.Resources[i].Error.Failed() {
			r.Resources[i].Error = e
		}
	}
}

// Fail implements Result: the topics that would have been created are
// LEADER_NOT_AVAILABLE with e's message, for the client's retry.
func (r *AutoCreateTopicsResult) Fail(e APIError) { failTopics(r.Topics, notCreated(e)) }

// Fail implements Result: no block.
func (r *AllocateProducerIDsResult) Fail(e APIError) {
	if !r.Error.Failed() {
		*r = AllocateProducerIDsResult{Error: e}
	}
}

func failTopics(ts []TopicError, e APIError) {
	for i := range ts {
		if !ts[i].Error.Failed() {
			ts[i].Error = e
		}
	}
}

// notCreated is the error of an auto-created topic whose creation did not
// apply: LEADER_NOT_AVAILABLE, retriable, with the cause.
func notCreated(e APIError) APIError {
	return APIError{Code: leaderNotAvailable, Message: e.Message}
}
