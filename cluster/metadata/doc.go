// Package metadata holds the cluster's metadata as records of the raft
// metadata log and as the immutable image those records build: topics and
// their partitions (replicas, ISR, leader, epochs), brokers (epochs, fenced
// state, addresses), config overrides, producer-id blocks, the cluster id
// and the controller. actors/ and wire/ read the image; the metadata quorum
// (cluster/) writes and applies the records. The package does no I/O, reads
// no clock (new topic ids come from the Controller's Rand) and holds no
// goroutines: applying a record depends only on the
// records before it.
//
// Records are the *Record types (a closed set implementing Record).
// EncodeRecord and DecodeRecord turn one into the bytes of a log entry:
// a type tag, a version and a msgpack payload.
//
// Changes are asked for as data: a Request (the admin requests
// CreateTopicsRequest, CreatePartitionsRequest, DeleteTopicsRequest,
// AlterConfigsRequest, AutoCreateTopicsRequest,
// AllocateProducerIDsRequest; the brokers' own RegisterBrokerRequest,
// BrokerHeartbeatRequest, ElectLeadersRequest, AlterPartitionRequest) is
// a plain struct that any node sends to the controller (the metadata
// quorum's leader),
// and a Result answers each of its items with a Kafka error code and
// message (APIError): no function and no Go error crosses between nodes.
// EncodeRequest and EncodeResult give their msgpack bytes, in the records'
// envelope. Controller.Evaluate decides a request against the
// controller's own image: validation, the controller's defaults and
// replica placement (placement.go) live here, and the wire adapter only
// translates Kafka requests and responses. ErrorOf maps the package's
// errors to Kafka codes.
//
// The proposal helpers (NewTopicRecords, AddPartitionRecords,
// DeleteTopicRecords, RegisterBrokerRecords, FenceBrokerRecords,
// ElectLeader, ChangeISR, AllocateProducerIDs) are pure functions of an
// image and a proposal that return the records to propose, or the error
// the proposal deserves; the evaluators are built on them. The
// controller calls them against its latest image,
// including records it proposed that are not committed yet, so that two
// proposals in flight cannot both pass a check that only one of them may.
//
// Sessions is the controller's memory of broker liveness (heartbeats and
// memberlist's hints), the one piece of controller state that is no log
// fact: it decides when Controller.FenceExpired fences a broker and
// whether a registration would take a live process's node id.
//
// # The caller's duties
//
//  1. Apply every committed record, in log order, exactly once, with its
//     log offset (the raft index of its entry; the records of one entry
//     share it). Start from Empty, or from Restore of a snapshot.
//  2. Treat an image as immutable: never modify an Image, nor the slices of
//     a Partition or a Record the package hands out or is handed.
//  3. Apply a run of records (a raft Ready's committed entries, a snapshot)
//     through one Builder, then publish the result once, so readers never
//     see half of an entry's batch.
//  4. Publish images through an atomic.Pointer[Image] (or an actor
//     message); readers load the pointer and read the image without locks.
//  5. An Apply error leaves the image as it was. For a committed record the
//     controller checked, it means a bug or a corrupt log: stop applying
//     and report it. Call Builder.AdvanceTo for entries that hold no record.
//  6. For a raft snapshot, store Image.Records (encoded) and Image.Offset;
//     rebuild with Restore.
package metadata
