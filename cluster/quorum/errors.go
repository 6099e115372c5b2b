package quorum

import (
	"errors"

	"github.com/weirmq/weir/internal/kafkaerr"
)

// Sentinel errors; callers test them with errors.Is.
var (
	// ErrCorrupt reports a metadata log, quorum-state or checkpoint file
	// that does not hold what this package wrote.
	ErrCorrupt = errors.New("quorum: corrupt metadata log state")
	// ErrNotLeader is returned by Propose on a node that is not the quorum
	// leader: only the controller proposes. Kafka: NOT_CONTROLLER.
	ErrNotLeader = kafkaerr.New(kafkaerr.NotController, "quorum: not the leader")
	// ErrProposalDropped reports a proposal that will never commit: its
	// leader lost its term before the entry committed, or raft refused it.
	// Kafka: NOT_CONTROLLER.
	ErrProposalDropped = kafkaerr.New(kafkaerr.NotController, "quorum: proposal dropped")
	// ErrApplyFailed reports a committed record that the metadata image
	// rejected: a bug in the controller's validation or a corrupt log. The
	// node stops applying and every later call returns it.
	ErrApplyFailed = errors.New("quorum: applying a committed record failed")
	// ErrStorageUnavailable reports a write to the metadata log, the
	// quorum-state or a checkpoint that failed with an I/O error (a full
	// disk, no file descriptors, EIO): the node keeps what it could not
	// persist, writes nothing new and acknowledges nothing until a retry
	// succeeds (Node.HandleReady). Retriable: REQUEST_TIMED_OUT.
	ErrStorageUnavailable = kafkaerr.New(kafkaerr.LogUnavailable, "quorum: metadata storage unavailable")
	// ErrInvalidConfig reports a Config that Validate rejects.
	ErrInvalidConfig = errors.New("quorum: invalid config")
	// ErrNotLearner is returned by AddLearner for a voter (or a negative
	// id): the voters are static, and a voter never becomes a learner.
	ErrNotLearner = errors.New("quorum: not a learner")
	// ErrEmptyProposal is returned by Propose without records.
	ErrEmptyProposal = errors.New("quorum: empty proposal")
)
