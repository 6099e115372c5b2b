package wire

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirmq/weir/actors/fetchsession"
)

// ErrNoRoute is a request that reached the broker handler without a route:
// the API table advertises a key that handler.go does not route (a bug).
var ErrNoRoute = errors.New("wire: no handler for API key")

// BrokerHandlerConfig is what NewBrokerHandler needs.
type BrokerHandlerConfig struct {
	// Broker is the node the handlers serve.
	Broker Broker
	// System is the node's actor system (the caller's): fetch session
	// actors are spawned in it.
	System *actor.ActorSystem
	// Logger receives one line per rejected request; nil uses
	// slog.Default().
	Logger *slog.Logger
	// FetchSessions sizes the fetch session cache
	// (max.incremental.fetch.session.cache.slots,
	// min.incremental.fetch.session.eviction.ms); nil uses Kafka's
	// defaults.
	FetchSessions *fetchsession.Config
	// FetchMemoryBytes bounds the record bytes that the node's fetches
	// hold at once (fetch_memory.go); 0 means DefaultFetchMemoryBytes.
	FetchMemoryBytes int64
}

// BrokerHandler is the Handler that serves every Kafka API of the table
// other than ApiVersions by turning requests into actor messages and
// metadata proposals. Each API's code lives in its NN_name.go file as a
// method of this type; route below names them.
type BrokerHandler struct {
	cfg    BrokerHandlerConfig
	broker Broker
	log    *slog.Logger
	// state owned by individual APIs lives in their files' types, held
	// here.
	apis brokerAPIs
}

// NewBrokerHandler returns the broker's Handler. Call Close when the
// server has closed.
func NewBrokerHandler(cfg BrokerHandlerConfig) (*BrokerHandler, error) {
	if cfg.Broker == nil || cfg.System == nil {
		return nil, fmt.Errorf("%w: broker handler needs a Broker and an actor system", ErrInvalidConfig)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	h := &BrokerHandler{cfg: cfg, broker: cfg.Broker, log: cfg.Logger}
	if err := h.apis.init(h); err != nil {
		return nil, err
	}
	return h, nil
}

// Close releases what the handlers hold (fetch session actors). Call it
// after Server.Close.
func (h *BrokerHandler) Close() error { return h.apis.close() }

// Handle routes req to its API's method.
func (h *BrokerHandler) Handle(ctx context.Context, req *Request) Response {
	fn, ok := routes[req.Key]
	if !ok {
		return CloseConnection(fmt.Errorf("%w %d", ErrNoRoute, req.Key))
	}
	return fn(h, ctx, req)
}

// route serves one API.
type route func(h *BrokerHandler, ctx context.Context, req *Request) Response

// routes maps each API key of the table (apis.go) but ApiVersions to the
// method that serves it. TestRoutes checks the two agree.
var routes = map[int16]route{
	0:  (*BrokerHandler).handleProduce,
	1:  (*BrokerHandler).handleFetch,
	2:  (*BrokerHandler).handleListOffsets,
	3:  (*BrokerHandler).handleMetadata,
	8:  (*BrokerHandler).handleOffsetCommit,
	9:  (*BrokerHandler).handleOffsetFetch,
	10: (*BrokerHandler).handleFindCoordinator,
	11: (*BrokerHandler).handleJoinGroup,
	12: (*BrokerHandler).handleHeartbeat,
	13: (*BrokerHandler).handleLeaveGroup,
	14: (*BrokerHandler).handleSyncGroup,
	15: (*BrokerHandler).handleDescribeGroups,
	16: (*BrokerHandler).handleListGroups,
	19: (*BrokerHandler).handleCreateTopics,
	20: (*BrokerHandler).handleDeleteTopics,
	21: (*BrokerHandler).handleDeleteRecords,
	22: (*BrokerHandler).handleInitProducerID,
	23: (*BrokerHandler).handleOffsetForLeaderEpoch,
	32: (*BrokerHandler).handleDescribeConfigs,
	33: (*BrokerHandler).handleAlterConfigs,
	37: (*BrokerHandler).handleCreatePartitions,
	42: (*BrokerHandler).handleDeleteGroups,
	44: (*BrokerHandler).handleIncrementalAlterConfigs,
	47: (*BrokerHandler).handleOffsetDelete,
	55: (*BrokerHandler).handleDescribeQuorum,
	60: (*BrokerHandler).handleDescribeCluster,
	61: (*BrokerHandler).handleDescribeProducers,
}
