package metadata_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/weirmq/weir/cluster/config"
	"github.com/weirmq/weir/cluster/metadata"
	"github.com/weirmq/weir/cluster/quorum"
	"github.com/weirmq/weir/internal/kafkaerr"
	"github.com/weirmq/weir/log"
)

// ErrorOf takes its codes from internal/kafkaerr and shapes the message:
// Kafka's description where the error's text is not the client's, the
// text less the sentinels' prefixes otherwise.
func TestErrorOf(t *testing.T) {
	failed := kafkaerr.New(kafkaerr.NodeFailed, "cluster: metadata actor failed")
	cases := []struct {
		name string
		err  error
		want metadata.APIError
	}{
		{"nil", nil, metadata.APIError{}},
		{"an APIError", fmt.Errorf("wrapped: %w", metadata.APIError{Code: 17, Message: "m"}), metadata.APIError{Code: 17, Message: "m"}},
		{"a topic", fmt.Errorf("%w: topic a.b collides with a_b", metadata.ErrInvalidTopic),
			metadata.APIError{Code: kerr.InvalidTopicException.Code, Message: "topic a.b collides with a_b"}},
		{"a config", fmt.Errorf("%w: %w: Unknown topic config name: x", metadata.ErrInvalidConfig, config.ErrInvalidConfig),
			metadata.APIError{Code: kerr.InvalidConfig.Code, Message: "Unknown topic config name: x"}},
		{"too large", fmt.Errorf("cluster: %w: 10001 records", metadata.ErrOpTooLarge),
			metadata.APIError{Code: kerr.PolicyViolation.Code, Message: "Unable to perform excessively large batch operation."}},
		{"log unavailable", fmt.Errorf("%w (disk full)", metadata.ErrLogUnavailable),
			metadata.APIError{Code: kerr.RequestTimedOut.Code, Message: "Metadata log cannot be written (disk full)."}},
		{"quorum storage", fmt.Errorf("cluster: propose: %w: %w", quorum.ErrStorageUnavailable, log.ErrLogFailed),
			metadata.APIError{Code: kerr.RequestTimedOut.Code, Message: kerr.RequestTimedOut.Description}},
		{"a lost leadership", fmt.Errorf("%w: entry 9 of term 2 replaced", quorum.ErrProposalDropped),
			metadata.APIError{Code: kerr.NotController.Code, Message: kerr.NotController.Description}},
		{"not the leader", fmt.Errorf("cluster: propose: %w: node 1 (leader 2)", quorum.ErrNotLeader),
			metadata.APIError{Code: kerr.NotController.Code, Message: kerr.NotController.Description}},
		// Whatever stopped the node, even a record the image refused.
		{"a failed node", fmt.Errorf("%w: %w: %w", failed, quorum.ErrApplyFailed, metadata.ErrInvalidRecord),
			metadata.APIError{Code: kerr.UnknownServerError.Code, Message: kerr.UnknownServerError.Description}},
		{"a failed log", fmt.Errorf("%w: %w", failed, log.ErrRecordTooLarge),
			metadata.APIError{Code: kerr.UnknownServerError.Code, Message: kerr.UnknownServerError.Description}},
		{"stopping", fmt.Errorf("wait: %w", context.Canceled),
			metadata.APIError{Code: kerr.RequestTimedOut.Code, Message: kerr.RequestTimedOut.Description}},
		{"anything else", errors.New("no quorum"),
			metadata.APIError{Code: kerr.UnknownServerError.Code, Message: kerr.UnknownServerError.Description}},
	}
	for _, tc := range cases {
		if got := metadata.ErrorOf(tc.err); got != tc.want {
			t.Errorf("%s: ErrorOf(%v) = %+v, want %+v", tc.name, tc.err, got, tc.want)
		}
	}
}
