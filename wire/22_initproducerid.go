package wire

// InitProducerId (key 22), versions 0-4.
//
// v0 is KIP-98 (librdkafka 2.0.2 requires v0 to be advertised before it
// enables idempotence: docs/clients.md rule 2). v1 throttle time. v2
// flexible (KIP-482). v3 producer_id/producer_epoch for KIP-360 recovery.
// v4 PRODUCER_FENCED (KIP-588). v5 (KIP-890) and v6 (2PC) are not served.
//
// An idempotent producer (null transactional_id) gets a fresh producer id
// with epoch 0 at every call, as Kafka's TransactionCoordinator answers it
// ("always blindly accept the request"): the id/epoch a v3+ request carries
// is only checked to be both set or both unset (INVALID_REQUEST
// otherwise), because an idempotent producer bumps its epoch itself and
// asks for a new id when the epoch would overflow. Ids come from
// Broker.ProducerID: a block of metadata.DefaultProducerIDBlockSize ids
// that the controller allocates to this broker in the metadata log
// (metadata.AllocateProducerIDsRequest) when its current block runs out,
// so no id is ever handed out twice, by two brokers or across restarts.
// Until a block is applied the request gets COORDINATOR_LOAD_IN_PROGRESS
// (retriable), as a Kafka broker waiting for its block answers; once the
// ids run out, UNKNOWN_SERVER_ERROR.
//
// Transactions are not served yet: a transactional_id gets
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED, the fatal code FindCoordinator
// gives it too (10_findcoordinator.go), for a client that sends
// InitProducerId without looking the coordinator up (the response has no
// error message); an empty one gets INVALID_REQUEST as in Kafka.

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirmq/weir/cluster/metadata"
)

func (h *BrokerHandler) handleInitProducerID(ctx context.Context, req *Request) Response {
	r := req.Body.(*kmsg.InitProducerIDRequest)
	resp := r.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	switch {
	case r.TransactionalID != nil && *r.TransactionalID == "":
		resp.ErrorCode = kerr.InvalidRequest.Code
		h.log.Info("init producer id refused", "client", req.ClientID, "reason", "empty transactional id")
		return Reply(resp)
	case r.TransactionalID != nil:
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
		h.log.Info("init producer id refused", "client", req.ClientID, "reason", "transactions are not supported yet",
			"transactional_id", *r.TransactionalID)
		return Reply(resp)
	case (r.ProducerID == -1) != (r.ProducerEpoch == -1):
		resp.ErrorCode = kerr.InvalidRequest.Code
		h.log.Info("init producer id refused", "client", req.ClientID, "reason", "producer id and epoch must both be set or both be -1",
			"producer_id", r.ProducerID, "producer_epoch", r.ProducerEpoch)
		return Reply(resp)
	}
	return Defer(func(ctx context.Context) Response {
		id, err := h.broker.ProducerID(ctx)
		if err != nil {
			h.log.Info("init producer id: no producer id block", "client", req.ClientID, "err", err)
			resp.ErrorCode = kerr.CoordinatorLoadInProgress.Code
			if e, ok := errors.AsType[metadata.APIError](err); ok && e.Code == kerr.UnknownServerError.Code {
				// The ids ran out (or the controller failed for good).
				resp.ErrorCode = kerr.UnknownServerError.Code
			}
			return Reply(resp)
		}
		resp.ProducerID, resp.ProducerEpoch = id, 0
		return Reply(resp)
	})
}
